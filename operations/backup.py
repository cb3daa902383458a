"""``manage.py backup`` and ``restore``: one archive with the database and every stored file
(contract, "Backups hold everything"; docs/operating.md, "Backups and restore").

The archive is a tar file: ``backup.json`` (what it holds), the database's dump (operations/
dumps.py: SQLite's backup API, or COPY on PostgreSQL), and the uploads folder's files under
``files/``, byte for byte as they lie on disk (so they come back exactly as they were, and
need the same keys). With uploads in an S3-compatible store the archive holds the database
alone: the bucket is backed up by its own versioning. The keys are never in the archive: they
are kept apart from it. Scratch copies go to DATA_DIR, the service's own writable folder
(/tmp may be a small tmpfs, or private to one unit).

A restore goes into an empty database and an empty uploads folder only, so it can never mix
two installations' rows or overwrite a file.
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from django.conf import settings
from django.db import connection

import formflow
from core import clock
from core.errors import ServiceError
from operations.dumps import Dump, PostgresDump, SqliteDump
from operations.readiness import upload_folder

MANIFEST = "backup.json"
FORMAT = "formflow-backup-1"
FILES = "files"


@dataclass
class Summary:
    path: Path
    database: str
    files: int | None  # None: the files are in an S3-compatible store, not in the archive


def dumper() -> Dump:
    return SqliteDump() if connection.vendor == "sqlite" else PostgresDump()


def target(dest: Path) -> Path:
    if dest.is_dir():
        return dest / f"formflow-{clock.now():%Y%m%d-%H%M%S}.tar"
    return dest


def stored_files(folder: Path | None) -> list[Path]:
    if folder is None or not folder.is_dir():
        return []
    return sorted(path for path in folder.rglob("*") if path.is_file())


# --- backup -----------------------------------------------------------------------------------


def backup_to_stream(out: IO[bytes]) -> Summary:
    """Write the archive to ``out`` as a stream (``manage.py backup -``: standard output, for
    a container or a pipe to other storage)."""
    with tarfile.open(fileobj=out, mode="w|") as archive:
        return _write(archive, Path("-"))


def backup(dest: Path) -> Summary:
    """Write the archive to ``dest`` (a new file, or a new file in a folder), readable by this
    user alone: it holds every submission."""
    path = target(dest)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ServiceError("exists", f"{path} exists already: name a new file.") from None
    try:
        with os.fdopen(fd, "wb") as out, tarfile.open(fileobj=out, mode="w") as archive:
            summary = _write(archive, path)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return summary


def _write(archive: tarfile.TarFile, path: Path) -> Summary:
    dump, folder = dumper(), upload_folder()
    _add_manifest(archive, folder)
    with tempfile.TemporaryDirectory(prefix="formflow-backup-", dir=settings.DATA_DIR) as scratch:
        copy = Path(scratch) / dump.filename
        dump.dump(copy)
        archive.add(copy, arcname=dump.filename)
    if folder is None:
        return Summary(path, connection.vendor, None)
    added = 0
    for file in stored_files(folder):
        try:
            archive.add(file, arcname=f"{FILES}/{file.relative_to(folder)}", recursive=False)
        except FileNotFoundError:
            continue  # deleted with its submission since the folder was listed
        added += 1
    return Summary(path, connection.vendor, added)


def _add_manifest(archive: tarfile.TarFile, folder: Path | None) -> None:
    manifest = {"format": FORMAT, "version": formflow.__version__, "database": connection.vendor,
                "files": "in the archive" if folder is not None else "in the S3 store",
                "createdAt": clock.now().isoformat()}
    data = json.dumps(manifest, indent=2).encode()
    info = tarfile.TarInfo(MANIFEST)
    info.size, info.mode, info.mtime = len(data), 0o600, int(clock.now().timestamp())
    with tempfile.SpooledTemporaryFile() as buffer:
        buffer.write(data)
        buffer.seek(0)
        archive.addfile(info, buffer)


# --- restore ----------------------------------------------------------------------------------


def restore_from_stream(stream: IO[bytes]) -> Summary:
    """Restore from ``stream`` (``manage.py restore -``: standard input). A restore reads the
    archive's parts in its own order, so the stream is kept in a private file first."""
    with tempfile.NamedTemporaryFile(prefix="formflow-restore-", suffix=".tar",
                                     dir=settings.DATA_DIR) as copy:
        shutil.copyfileobj(stream, copy)
        copy.flush()
        return restore(Path(copy.name))


def restore(source: Path) -> Summary:
    """Put the archive's database and files back, into an empty database and folder."""
    if not source.is_file():
        raise ServiceError("unreadable", f"{source} is not a file.")
    try:
        with tarfile.open(source, mode="r") as archive:
            return _restore(archive, source)
    except tarfile.ReadError as error:
        raise ServiceError("unreadable", f"{source} is not a FormFlow backup: {error}") from None


def _restore(archive: tarfile.TarFile, source: Path) -> Summary:
    manifest = _manifest(archive, source)
    dump, folder = dumper(), upload_folder()
    files = [member for member in archive.getmembers() if member.name.startswith(FILES + "/")]
    if files and folder is None:
        raise ServiceError("no_folder", "The archive holds files, but STORAGE_URL names an "
                                        "S3 store: restore with the uploads on disk.")
    _check_empty(folder)
    with tempfile.TemporaryDirectory(prefix="formflow-restore-", dir=settings.DATA_DIR) as scratch:
        archive.extract(dump.filename, scratch, filter="data")
        dump.load(Path(scratch) / dump.filename)
    _extract_files(archive, files, folder)
    return Summary(source, manifest["database"], len(files) if folder is not None else None)


def _manifest(archive: tarfile.TarFile, source: Path) -> dict:
    try:
        member = archive.extractfile(MANIFEST)
        manifest = json.loads(member.read()) if member else {}
    except (KeyError, ValueError):
        manifest = {}
    if manifest.get("format") != FORMAT:
        raise ServiceError("unreadable", f"{source} is not a FormFlow backup (no {MANIFEST}).")
    if manifest["database"] != connection.vendor:
        raise ServiceError("other_database", f"{source} holds a {manifest['database']} "
                                             f"database; this one is {connection.vendor}.")
    return manifest


def _check_empty(folder: Path | None) -> None:
    tables = connection.introspection.table_names()
    if tables:
        raise ServiceError("not_empty", f"The database is not empty ({len(tables)} tables): "
                                        "restore into a new, empty database.")
    if folder is not None and folder.is_dir() and any(folder.iterdir()):
        raise ServiceError("not_empty", f"The uploads folder {folder} is not empty: restore "
                                        "into an empty folder.")


def _extract_files(archive: tarfile.TarFile, files: list[tarfile.TarInfo],
                   folder: Path | None) -> None:
    if folder is None or not files:
        return
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for member in files:
        member.name = member.name.removeprefix(FILES + "/")
    # The "data" filter refuses absolute paths, "..", links out of the folder and devices.
    archive.extractall(folder, members=files, filter="data")
    for path in folder.rglob("*"):
        path.chmod(0o700 if path.is_dir() else 0o600)
