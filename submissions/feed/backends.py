"""How sequencer steps are kept to one at a time on this database, chosen once, and the
step's statement in its dialect (submissions/feed/__init__.py tells the whole story)."""

from __future__ import annotations

import functools
from datetime import UTC, datetime

from django.db import connection
from django.utils.dateparse import parse_datetime

# The rows to place, numbered in arrival order (row_number, not nextval: a sequence gives no
# order within one statement). Each stamp is raised to the newest already in the feed; an inbox
# row that moves keeps its arrival in received_at, as a rescue's does. (A held row's
# received_at says it was rescued once, so it is left alone: its stamp moves by milliseconds.)
STEP_SQL = """
UPDATE {table} AS s
SET position = n.place,
    submitted_at = {greatest}(s.submitted_at, %s),
    received_at = CASE WHEN s.status = 'inbox' AND s.submitted_at < %s
                       THEN COALESCE(s.received_at, s.submitted_at) ELSE s.received_at END
FROM (SELECT b.id, %s + row_number() OVER (ORDER BY b.submitted_at, b.id) AS place
      FROM (SELECT id, submitted_at FROM {table} WHERE position IS NULL
            ORDER BY submitted_at, id LIMIT %s {skip_locked}) AS b) AS n
WHERE s.id = n.id
RETURNING position, submitted_at
"""


class Postgres:
    """Steps take one advisory lock (in their transaction), so positions are given by one
    session at a time; a row another transaction holds locked is left to the next step."""

    LOCK = 0x466565645365  # "FeedSe": any constant no other code uses

    def __init__(self, table: str) -> None:
        self.sql = STEP_SQL.format(table=table, greatest="GREATEST",
                                   skip_locked="FOR UPDATE SKIP LOCKED")

    def lock(self, cursor) -> None:
        # A step is short; a reader never waits long behind another one. The timeout is put
        # back after, for what else the transaction does (a reader inside a larger one).
        cursor.execute("SELECT current_setting('lock_timeout')")
        (previous,) = cursor.fetchone()
        cursor.execute("SET LOCAL lock_timeout = '2s'")
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [self.LOCK])
        cursor.execute("SELECT set_config('lock_timeout', %s, true)", [previous])

    def stamp(self, value) -> datetime:
        return value


class Sqlite:
    """SQLite writes one transaction at a time and the project begins them IMMEDIATE: the
    step's transaction is its lock. Raw stamps come back as SQLite's text."""

    def __init__(self, table: str) -> None:
        self.sql = STEP_SQL.format(table=table, greatest="MAX", skip_locked="")

    def lock(self, cursor) -> None:
        pass

    def stamp(self, value) -> datetime:
        moment = parse_datetime(value) if isinstance(value, str) else value
        assert moment is not None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@functools.cache
def chosen(table: str) -> Postgres | Sqlite:
    """The backend for steps over ``table`` (the submissions')."""
    return Postgres(table) if connection.vendor == "postgresql" else Sqlite(table)
