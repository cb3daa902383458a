"""The database's part of a backup, one class per backend (operations/backup.py picks one).

SQLite copies itself with its online backup API, both ways. PostgreSQL is read and written
with COPY (``PostgresDump``), through the service's own connection settings.
"""

from __future__ import annotations

import json
import sqlite3
import tarfile
import tempfile
from pathlib import Path
from typing import IO, Protocol

from django.conf import settings
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from core.errors import ServiceError


class Dump(Protocol):
    filename: str

    def dump(self, path: Path) -> None: ...

    def load(self, path: Path) -> None: ...


class SqliteDump:
    filename = "database.sqlite3"

    def dump(self, path: Path) -> None:
        connection.ensure_connection()
        copy = sqlite3.connect(path)
        try:
            connection.connection.backup(copy)
        finally:
            copy.close()

    def load(self, path: Path) -> None:
        connection.ensure_connection()
        source = sqlite3.connect(path)
        try:
            source.backup(connection.connection)
        finally:
            source.close()


class PostgresDump:
    """Every row of every table and each sequence's position, read with COPY in one
    REPEATABLE READ, READ ONLY transaction: a consistent snapshot while the service runs. The
    schema is not copied: a restore builds it with the migrations the backed-up database had
    applied, then loads the rows in one transaction. It needs no client tools, so it runs
    wherever the app runs (the image has no pg_dump, and a pg_dump older than the server
    refuses to dump it)."""

    filename = "database.pgcopy.tar"

    def dump(self, path: Path) -> None:
        with tarfile.open(path, "w") as out, transaction.atomic(), \
                connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            tables = connection.introspection.table_names(cursor)
            described = {"migrations": applied_leaves(), "tables": tables,
                         "sequences": sequence_positions(cursor)}
            add_bytes(out, SCHEMA, json.dumps(described).encode())
            for table in tables:
                with tempfile.TemporaryFile(dir=settings.DATA_DIR) as rows:
                    with cursor.copy(f"COPY {quoted(table)} TO STDOUT") as copy:
                        for block in copy:
                            rows.write(block)
                    add_file(out, f"rows/{table}", rows)

    def load(self, path: Path) -> None:
        with tarfile.open(path) as archive:
            described = json.loads(member(archive, SCHEMA).read())
            migrate_to(described["migrations"])
            with transaction.atomic(), connection.cursor() as cursor:
                load_rows(cursor, archive, described["tables"])
                for name, (last, called) in described["sequences"].items():
                    cursor.execute("SELECT setval(%s, %s, %s)", [quoted(name), last, called])


SCHEMA = "schema.json"


def quoted(name: str) -> str:
    return connection.ops.quote_name(name)


def applied_leaves() -> dict[str, str]:
    """Each app's last applied migration: the schema a restore builds before the rows."""
    leaves: dict[str, str] = {}
    for app, name in MigrationRecorder(connection).applied_migrations():
        leaves[app] = max(leaves.get(app, name), name)
    return leaves


def sequence_positions(cursor) -> dict[str, list]:
    cursor.execute("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = "
                   "c.relnamespace WHERE c.relkind = 'S' AND n.nspname = current_schema()")
    positions = {}
    for (name,) in cursor.fetchall():
        cursor.execute(f"SELECT last_value, is_called FROM {quoted(name)}")
        positions[name] = list(cursor.fetchone())
    return positions


def migrate_to(leaves: dict[str, str]) -> None:
    executor = MigrationExecutor(connection)
    missing = [f"{app}.{name}" for app, name in leaves.items()
               if (app, name) not in executor.loader.graph.nodes]
    if missing:
        raise ServiceError("newer", "The backup was made by a newer FormFlow (migrations "
                                    f"{', '.join(missing[:3])}): restore it with that release.")
    executor.migrate(list(leaves.items()))


def load_rows(cursor, archive: tarfile.TarFile, tables: list[str]) -> None:
    """The rows of every table, in place of what the migrations wrote (content types, the
    migrations' own record). Foreign keys are checked at commit (Django makes them
    deferrable); the tables' own triggers stay off while their rows go back as they were."""
    cursor.execute("SET CONSTRAINTS ALL DEFERRED")
    cursor.execute(f"TRUNCATE {', '.join(quoted(table) for table in tables)} CASCADE")
    # A table with foreign key checks pending cannot be altered: triggers go off before the
    # first row and back on once the checks have run.
    for table in tables:
        cursor.execute(f"ALTER TABLE {quoted(table)} DISABLE TRIGGER USER")
    for table in tables:
        rows = member(archive, f"rows/{table}")
        with cursor.copy(f"COPY {quoted(table)} FROM STDIN") as copy:
            while block := rows.read(1 << 20):
                copy.write(block)
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # every foreign key checked here
    for table in tables:
        cursor.execute(f"ALTER TABLE {quoted(table)} ENABLE TRIGGER USER")


def member(archive: tarfile.TarFile, name: str) -> IO[bytes]:
    found = archive.extractfile(name)
    if found is None:
        raise ServiceError("unreadable", f"The backup's database has no {name}.")
    return found


def add_bytes(out: tarfile.TarFile, name: str, data: bytes) -> None:
    with tempfile.TemporaryFile(dir=settings.DATA_DIR) as buffer:
        buffer.write(data)
        add_file(out, name, buffer)


def add_file(out: tarfile.TarFile, name: str, file: IO[bytes]) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = file.tell(), 0o600
    file.seek(0)
    out.addfile(info, file)
