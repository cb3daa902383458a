"""Numbers drawn from a database sequence: never handed out twice, even by a transaction that
rolls back (PostgreSQL does not take a ``nextval`` back).

SQLite has no sequences; there the caller's own next number is answered, which is enough for
the embedded setup, which runs without Redis (accounts/quota.py, the only user). With
REDIS_URL set on SQLite, a seeding whose commit failed after it set its counter can see its
generation handed out again, as before the sequence (docs/exactness.md). Creating and
dropping a sequence (for migrations) likewise does nothing there.
"""

from __future__ import annotations

from django.db import connection


def draw_at_least(sequence: str, at_least: int) -> int:
    """The sequence's next number, moved up to ``at_least`` first if it is behind."""
    if connection.vendor != "postgresql":
        return at_least
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT CASE WHEN drawn >= %s THEN drawn ELSE setval(%s::regclass, %s) END "
            "FROM (SELECT nextval(%s::regclass) AS drawn) AS next",
            [at_least, sequence, at_least, sequence],
        )
        return cursor.fetchone()[0]


def create(schema_editor, sequence: str, past: str) -> None:
    """Create ``sequence`` (a migration's step), starting after the value of the SQL
    expression ``past`` (a subquery such as the highest number handed out so far)."""
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"CREATE SEQUENCE IF NOT EXISTS {sequence} AS bigint")
    schema_editor.execute(f"SELECT setval('{sequence}', COALESCE(({past}), 0) + 1, false)")


def drop(schema_editor, sequence: str) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP SEQUENCE IF EXISTS {sequence}")
