"""The database's part of a backup, one class per backend (operations/backup.py picks one).

SQLite copies itself with its online backup API, both ways. PostgreSQL uses its own tools:
``pg_dump --format=custom`` takes a consistent snapshot while the service runs, and
``pg_restore`` puts it back in one transaction. The tools must be at least as new as the
server (a pg_dump older than the server refuses to dump it), so the server's own major version
is looked for first (Debian's ``/usr/lib/postgresql/<major>/bin``), then PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Protocol

from django.db import connection

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
    filename = "database.dump"

    def dump(self, path: Path) -> None:
        run(tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges",
            f"--file={path}")

    def load(self, path: Path) -> None:
        run(tool("pg_restore"), "--no-owner", "--no-privileges", "--exit-on-error",
            "--single-transaction", f"--dbname={connection.settings_dict['NAME']}", str(path))


def server_major() -> int:
    connection.ensure_connection()
    return connection.connection.info.server_version // 10000  # psycopg: 160004 is 16.4


def tool(name: str) -> str:
    """The newest fitting ``name``: the server's own version's, else the one on PATH if it
    is not older than the server."""
    major = server_major()
    own = Path(f"/usr/lib/postgresql/{major}/bin/{name}")
    found = str(own) if own.exists() else shutil.which(name)
    if found is None:
        raise ServiceError("no_tool", f"{name} is not installed: install the PostgreSQL "
                                      f"{major} client tools (postgresql-client-{major}).")
    said = subprocess.run([found, "--version"], capture_output=True, text=True).stdout
    version = re.search(r"(\d+)(?:\.\d+)?", said)
    if version is None or int(version[1]) < major:
        raise ServiceError("old_tool", f"{found} ({said.strip()}) is older than the PostgreSQL "
                                       f"{major} server: install postgresql-client-{major}.")
    return found


def libpq_environment() -> dict[str, str]:
    """The connection's settings as libpq reads them: no password on a command line."""
    settings = connection.settings_dict
    env = dict(os.environ)
    for variable, key in (("PGHOST", "HOST"), ("PGPORT", "PORT"), ("PGUSER", "USER"),
                          ("PGPASSWORD", "PASSWORD"), ("PGDATABASE", "NAME")):
        if settings.get(key):
            env[variable] = str(settings[key])
    if settings.get("OPTIONS", {}).get("sslmode"):
        env["PGSSLMODE"] = settings["OPTIONS"]["sslmode"]
    return env


def run(*words: str) -> None:
    result = subprocess.run(words, env=libpq_environment(), capture_output=True, text=True)
    if result.returncode:
        said = (result.stderr.strip() or result.stdout.strip()).splitlines()
        raise ServiceError("tool_failed", f"{Path(words[0]).name} failed: "
                                          f"{said[-1] if said else result.returncode}")
