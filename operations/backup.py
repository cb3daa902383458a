"""A consistent copy of the embedded SQLite database while the service runs (SQLite's online
backup API: writers may go on meanwhile). PostgreSQL has pg_dump for this
(docs/operating.md, "Backups and restore")."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from django.db import connection

from core.errors import ServiceError


def not_sqlite() -> ServiceError:
    return ServiceError(
        "not_sqlite",
        f"This database is {connection.vendor}, not the embedded SQLite: back it up with "
        "pg_dump (see docs/operating.md, \"Backups and restore\").",
    )


def target(dest: Path) -> Path:
    if dest.is_dir():
        from core import clock

        return dest / f"formflow-{clock.now():%Y%m%d-%H%M%S}.sqlite3"
    return dest


def backup(dest: Path) -> Path:
    """Copy the database to ``dest`` (a new file, or a new file in a folder), readable by
    this user alone: it holds every submission."""
    if connection.vendor != "sqlite":
        raise not_sqlite()
    path = target(dest)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ServiceError("exists", f"{path} exists already: name a new file.") from None
    os.close(fd)
    connection.ensure_connection()
    copy = sqlite3.connect(path)
    try:
        connection.connection.backup(copy)
    except BaseException:
        copy.close()
        path.unlink(missing_ok=True)
        raise
    copy.close()
    return path
