"""Fixtures of the races between deletes and the requests and workers beside them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

import pytest
from django.db import connection, connections


@pytest.fixture
def shared_database(transactional_db, tmp_path) -> Iterator[None]:
    """Every thread on one database that waits for its lock, as production's does.

    On SQLite the suite's database is in memory, with one cache shared by its connections,
    where a second writer fails at once ("table is locked") instead of waiting for the lock:
    the test runs on a copy in a file, as the embedded setup keeps it, for this thread and
    every thread it starts. PostgreSQL needs nothing."""
    if connection.vendor != "sqlite":
        yield
        return
    memory = connections["default"]
    memory.ensure_connection()
    path = tmp_path / "db.sqlite3"
    with sqlite3.connect(path) as copy:
        memory.connection.backup(copy)
        copy.execute("PRAGMA journal_mode=WAL")  # as the settings open it
    kept = connections.settings["default"]
    connections.settings["default"] = {**kept, "NAME": str(path)}
    on_file = memory.__class__(connections.settings["default"], "default")
    connections["default"] = on_file
    try:
        yield
    finally:
        on_file.close()
        connections.settings["default"] = kept
        connections["default"] = memory


@pytest.fixture
def deadlocks(shared_database) -> Callable[[], int]:
    """How many deadlocks PostgreSQL has broken in the test database so far (0 on SQLite,
    which takes one writer at a time and has none)."""

    def count() -> int:
        if connection.vendor != "postgresql":
            return 0
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute("SELECT deadlocks FROM pg_stat_database "
                           "WHERE datname = current_database()")
            return int(cursor.fetchone()[0])

    return count
