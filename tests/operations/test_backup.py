"""manage.py backup and restore: one archive with the database and every stored file, put back
into an empty database and folder (contract, "Backups hold everything")."""

from __future__ import annotations

import io
import json
import stat
import tarfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client

from config.storage import uploads_storage
from files.models import StoredFile
from tests.conftest import bearer
from tests.files.helpers import PDF, PNG, post, upload, upload_form

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def uploads(settings, tmp_path) -> Path:
    """Uploads on disk, in a folder of this test's own (as STORAGE_URL=file://... names one)."""
    return use_folder(settings, tmp_path / "uploads")


def use_folder(settings, folder: Path) -> Path:
    settings.STORAGES = {**settings.STORAGES, "uploads": uploads_storage(f"file://{folder}",
                                                                        folder.parent)}
    return folder


def wipe_database() -> None:
    """What a new, empty database is: no table at all."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("PRAGMA foreign_keys = OFF")
            for table in connection.introspection.table_names():
                # IF EXISTS: dropping a search index drops its own tables with it.
                cursor.execute(f'DROP TABLE IF EXISTS "{table}"')
            cursor.execute("PRAGMA foreign_keys = ON")
        else:
            cursor.execute("DROP SCHEMA public CASCADE")
            cursor.execute("CREATE SCHEMA public")
    connection.close()  # statements prepared on the old tables go with the session


def archive_names(path: Path) -> list[str]:
    with tarfile.open(path) as archive:
        return archive.getnames()


def download(url: str) -> bytes:
    response = Client().get(url.removeprefix("http://localhost:8000"))
    assert response.status_code == 200
    return b"".join(response.streaming_content)


def test_a_restore_with_the_same_keys_serves_the_submissions_and_their_files(
        public, user, uploads, settings, tmp_path):
    form = upload_form(user)
    sent = {"cv": upload("cv.pdf", PDF, "application/pdf"), "photo": upload("me.png", PNG)}
    assert post(public, form, {"name": "Ada", **sent}).status_code == 200
    token = bearer(user)
    out = io.StringIO()

    call_command("backup", str(tmp_path / "backup.tar"), stdout=out)
    wipe_database()
    use_folder(settings, tmp_path / "restored-uploads")
    call_command("restore", str(tmp_path / "backup.tar"), stdout=io.StringIO())
    connection.close()

    assert "2 stored files" in out.getvalue()
    answer = Client().get(f"/api/v1/forms/{form.pk}/submissions",
                          HTTP_AUTHORIZATION=token).json()
    assert "data" in answer, answer
    [submission] = answer["data"]
    assert submission["fields"]["name"] == "Ada"
    by_name = {file["name"]: file for file in submission["files"]}
    assert download(by_name["cv.pdf"]["url"]) == PDF
    assert download(by_name["me.png"]["url"]) == PNG
    assert StoredFile.objects.count() == 2
    # Sequences went back with the rows: the restored installation takes new submissions.
    again = {"cv": upload("cv2.pdf", PDF, "application/pdf")}
    assert post(public, form, {"name": "Grace", **again}).status_code == 200


def test_the_archive_is_private_and_holds_the_database_and_the_files(public, user, uploads,
                                                                      tmp_path):
    form = upload_form(user)
    post(public, form, {"cv": upload("cv.pdf", PDF, "application/pdf")})

    call_command("backup", str(tmp_path), stdout=io.StringIO())

    [path] = tmp_path.glob("formflow-*.tar")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    names = archive_names(path)
    assert names[0] == "backup.json"
    assert {"database.sqlite3", "database.pgcopy.tar"} & set(names)
    stored = [p.relative_to(uploads) for p in uploads.rglob("*") if p.is_file()]
    assert sorted(n for n in names if n.startswith("files/")) == sorted(
        f"files/{name}" for name in stored)


def test_with_an_s3_store_the_archive_holds_the_database_alone(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "uploads": uploads_storage(
        "s3://formflow-backups/prefix", tmp_path)}
    out = io.StringIO()

    call_command("backup", str(tmp_path / "backup.tar"), stdout=out)

    names = archive_names(tmp_path / "backup.tar")
    assert not [name for name in names if name.startswith("files/")]
    with tarfile.open(tmp_path / "backup.tar") as archive:
        manifest = json.load(archive.extractfile("backup.json"))
    assert manifest["files"] == "in the S3 store"
    assert "back the bucket up with its versioning" in out.getvalue()


def test_restore_refuses_a_database_that_is_not_empty(user, uploads, tmp_path):
    call_command("backup", str(tmp_path / "backup.tar"), stdout=io.StringIO())

    with pytest.raises(CommandError, match=r"The database is not empty \(\d+ tables\)"):
        call_command("restore", str(tmp_path / "backup.tar"))


def test_restore_refuses_an_uploads_folder_that_is_not_empty(settings, uploads, tmp_path):
    call_command("backup", str(tmp_path / "backup.tar"), stdout=io.StringIO())
    wipe_database()
    uploads.mkdir(parents=True, exist_ok=True)
    (uploads / "left-over").write_bytes(b"x")

    try:
        with pytest.raises(CommandError, match=r"uploads folder .* is not empty"):
            call_command("restore", str(tmp_path / "backup.tar"))
        assert connection.introspection.table_names() == []
    finally:
        use_folder(settings, tmp_path / "empty")
        call_command("restore", str(tmp_path / "backup.tar"), stdout=io.StringIO())
        connection.close()


def test_restore_says_what_is_wrong_with_a_file_that_is_no_backup(db, tmp_path):
    (tmp_path / "notes.txt").write_text("not an archive")

    with pytest.raises(CommandError, match="is not a FormFlow backup"):
        call_command("restore", str(tmp_path / "notes.txt"))
    with pytest.raises(CommandError, match="is not a file"):
        call_command("restore", str(tmp_path / "missing.tar"))


def test_backup_never_overwrites(db, tmp_path):
    existing = tmp_path / "backup.tar"
    existing.write_text("keep me")

    with pytest.raises(CommandError, match="exists already"):
        call_command("backup", str(existing))
    assert existing.read_text() == "keep me"


@pytest.mark.sqlite
def test_backup_and_restore_stream_through_a_pipe(tmp_path):
    """`manage.py backup -` writes the archive to standard output and `manage.py restore -`
    reads it from standard input (compose's commands, docs/deploy.md): as real processes."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]

    def manage(data_dir: Path, *arguments: str, given: bytes | None = None):
        env = {"PATH": "/usr/bin:/bin", "DATA_DIR": str(data_dir),
               "DJANGO_SETTINGS_MODULE": "config.settings"}
        return subprocess.run([sys.executable, "manage.py", *arguments], cwd=root, env=env,
                              input=given, capture_output=True, timeout=120)

    source, restored = tmp_path / "source", tmp_path / "restored"
    assert manage(source, "migrate", "--no-input").returncode == 0
    (source / "uploads" / "a").mkdir(parents=True)
    (source / "uploads" / "a" / "file").write_bytes(PNG)

    made = manage(source, "backup", "-")
    put_back = manage(restored, "restore", "-", given=made.stdout)

    assert made.returncode == 0, made.stderr
    assert b"Backed up the sqlite database and 1 stored files to standard output" in made.stderr
    assert put_back.returncode == 0, put_back.stderr
    assert (restored / "uploads" / "a" / "file").read_bytes() == PNG
    listed = manage(restored, "showmigrations", "forms_app")
    assert b"[X] 0009_form_notify_owner" in listed.stdout
