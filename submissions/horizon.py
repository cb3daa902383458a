"""The time below which every submission has committed: what keyset readers may serve.

Submissions are stamped by the database when inserted (``submitted_at``), but concurrent
writers commit in any order: a row stamped at 10:00:00.001 may commit after one stamped at
10:00:00.002. A reader that served the second and moved its cursor past it would never see the
first. So readers that must neither skip nor repeat (pull API pages, the two-pass CSV export)
serve only rows stamped before the horizon: the start of the oldest transaction that is
writing, or running a statement, now. Every row below it has committed, and every row still to
commit is stamped at or after it, because a row's stamp is taken inside its own transaction.
It is how log-based consumers read an outbox, with PostgreSQL's own view of open transactions
(``pg_stat_activity``) instead of a per-row transaction id.

A margin covers the instant in which a statement has its timestamp but is not yet shown as
running. SQLite needs no horizon: it runs write transactions one at a time, so its stamps are
in commit order.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import connection
from django.db.models import QuerySet

MARGIN = timedelta(milliseconds=250)

HORIZON_SQL = """
SELECT LEAST(statement_timestamp(), min(xact_start))
FROM pg_stat_activity
WHERE datname = current_database()
  AND pid <> pg_backend_pid()
  AND backend_type = 'client backend'
  AND xact_start IS NOT NULL
  AND (backend_xid IS NOT NULL OR state = 'active')
"""


def committed_before() -> datetime | None:
    """Every submission stamped before this has committed; None where all have (SQLite)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(HORIZON_SQL)
        (oldest,) = cursor.fetchone()
    return oldest - MARGIN


def settled(rows: QuerySet, horizon: datetime | None) -> QuerySet:
    return rows if horizon is None else rows.filter(submitted_at__lt=horizon)
