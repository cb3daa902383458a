"""The feed: the order in which the pull API and the stream serve a form's submissions.

Writers commit in any order: a row stamped at 10:00:00.001 may commit after one stamped at
10:00:00.002, under any role, from any connection. A reader that paged past the second by time
would never see the first. So a row is placed in the feed only after it has committed, by one
sequencer step (the transactional-outbox relay, or Marten's high-water mark): it takes the
committed rows that have no ``position`` yet, oldest stamp first, and numbers them after the
last position given. A row still uncommitted is invisible to the step and is placed by a later
one, after every position handed out so far; nothing else any session does can hold the
readers back, and no view of other sessions is needed.

The step also keeps stamps in feed order: a row that committed after a newer one is raised to
the newest stamp already in the feed (its arrival stays in ``received_at``). So along the feed
``submitted_at`` never goes down, and a client that syncs with ``since`` = the newest
``submittedAt`` it has seen (spec.md's sync pattern) still gets every row placed later.

Readers run the step before they read (bounded, and one indexed look when nothing waits), and
beat runs it every few seconds, so rows are placed while nobody reads too. Its only
backend-specific part is how steps are kept to one at a time, chosen once (backends.py).
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from django.db import DatabaseError, connection, transaction

from submissions.feed import backends
from submissions.models import FeedState, Submission

log = logging.getLogger(__name__)

BATCH = 2000
ROUNDS = 5  # steps one reader runs at most, within BUDGET seconds: a backlog is beat's to clear
BUDGET = 0.5
BEGINNING = datetime(1970, 1, 1, tzinfo=UTC)
TABLE = Submission._meta.db_table

PENDING_SQL = f"SELECT 1 FROM {TABLE} WHERE position IS NULL LIMIT 1"

def catch_up() -> int:
    """Place the rows committed so far (up to ``ROUNDS`` batches); how many were placed.
    Readers call it before they read. A step that cannot run now (its lock is held past the
    timeout, the database refuses) leaves the rows to the next one: readers still serve
    every row placed so far."""
    placed, deadline = 0, time.monotonic() + BUDGET
    for _ in range(ROUNDS):
        if time.monotonic() > deadline or not _pending():
            break
        try:
            moved = step()
        except DatabaseError:
            log.warning("feed: a step could not run; the next one places the rows",
                        exc_info=True)
            break
        placed += moved
        if moved < BATCH:
            break
    return placed


def _pending() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(PENDING_SQL)
        return cursor.fetchone() is not None


def step(batch: int = BATCH) -> int:
    """One sequencer step, in its own transaction: place up to ``batch`` committed rows."""
    backend = backends.chosen(TABLE)
    with transaction.atomic(), connection.cursor() as cursor:
        backend.lock(cursor)
        state, _ = FeedState.objects.get_or_create(pk=1, defaults={"newest": BEGINNING})
        # Adapted as the backend stores stamps (SQLite: text without "+00:00"), so the raised
        # stamps compare equal to the ones already in the feed.
        newest = connection.ops.adapt_datetimefield_value(state.newest)
        cursor.execute(backend.sql, [newest, newest, state.last_position, batch])
        placed = cursor.fetchall()
        if placed:
            FeedState.objects.filter(pk=1).update(
                last_position=max(position for position, _ in placed),
                newest=max(state.newest, *(backend.stamp(stamp) for _, stamp in placed)),
            )
    return len(placed)


def placed_upto() -> tuple[int, datetime]:
    """The last position given and the newest stamp in the feed: every row at or below that
    position has committed, and is stamped at or before that time."""
    state = FeedState.objects.filter(pk=1).values_list("last_position", "newest").first()
    return state or (0, BEGINNING)
