"""How many submissions a form's folder (inbox or spam) holds, without COUNT(*) over it.

A folder's size is a checkpoint and a tail. ``FolderCount`` holds how many of the folder's rows
are stamped before its ``counted_before``; the rows from there on are counted when read,
through the folder's index. Intake, the hot path, writes nothing here: a new row is stamped
after the commit horizon, which is as far as a checkpoint ever goes, so it is in the tail.

What moves a row below a checkpoint into or out of a folder (a mark, a rescue, a delete, a
purge) corrects the count in its own transaction, holding the form's two ``FolderCount`` rows
for the whole change. Moving a checkpoint holds them too, so a checkpoint never moves in the
middle of a change, and the rows it counts are settled: below the commit horizon. A read that
finds a long tail moves the checkpoint up to the horizon, and so does the hourly purge job.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from django.db import connection, transaction
from django.db.models import F, Max

from config import rawsql
from forms_app.models import Form
from submissions import horizon
from submissions.models import FolderCount, Status, Submission

# A tail this long is worth folding into the checkpoint when someone reads it.
ADVANCE_AT = 1000
BEGINNING = datetime(1970, 1, 1, tzinfo=UTC)


def _tail(form_id, status: str, since: datetime | None):
    rows = Submission.objects.filter(form_id=form_id, status=status)
    return rows if since is None else rows.filter(submitted_at__gte=since)


def size(form_id, status: str = Status.INBOX) -> int:
    """The folder's size now; moves its checkpoint when the tail has grown long. Two short
    statements through the folder's index, whatever its size."""
    counted, tail = _checkpoint_and_tail(form_id, status)
    if tail >= ADVANCE_AT:
        advance(form_id, status)
    return counted + tail


@functools.cache
def _tail_sql(status: str) -> str:
    # The status is one of two constants, written into the SQL so that the folder's partial
    # index applies. The checkpoint is read first and passed as a value: a correlated one
    # leaves the planner guessing a third of the rows, and it scans the table.
    assert status in Status.values
    return (
        f"SELECT count(*) FROM {Submission._meta.db_table} "
        f"WHERE form_id = %s AND status = '{status}' AND submitted_at >= %s"
    )


@functools.cache
def _checkpoint_sql() -> str:
    return (
        f"SELECT count, counted_before FROM {FolderCount._meta.db_table} "
        "WHERE form_id = %s AND status = %s"
    )


def _checkpoint_and_tail(form_id, status: str) -> tuple[int, int]:
    """The checkpoint's count and the number of rows after it."""
    key = rawsql.db_id(Form, form_id)
    with connection.cursor() as cursor:
        cursor.execute(_checkpoint_sql(), [key, status])
        counted, since = cursor.fetchone() or (0, None)
        cursor.execute(_tail_sql(status), [key, since or BEGINNING])
        (tail,) = cursor.fetchone()
    return counted, tail


def _ensure(form_id) -> None:
    FolderCount.objects.bulk_create(
        [FolderCount(form_id=form_id, status=status) for status in Status.values],
        ignore_conflicts=True,
    )


def _lock(form_id) -> dict[str, FolderCount]:
    """The form's checkpoints, held until the transaction ends (in one order: no deadlock)."""
    _ensure(form_id)
    rows = FolderCount.objects.select_for_update().filter(form_id=form_id).order_by("status")
    return {row.status: row for row in rows}


def advance(form_id, status: str) -> None:
    """Fold the folder's settled tail into its checkpoint."""
    with transaction.atomic():
        checkpoint = _lock(form_id)[status]
        upto = _settled_upto(form_id, status)
        if upto is None or (checkpoint.counted_before and upto <= checkpoint.counted_before):
            return
        settled = _tail(form_id, status, checkpoint.counted_before).filter(submitted_at__lt=upto)
        if added := settled.count():
            FolderCount.objects.filter(pk=checkpoint.pk).update(
                count=F("count") + added, counted_before=upto
            )


def _settled_upto(form_id, status: str) -> datetime | None:
    """Every row stamped before this has committed. SQLite writes one transaction at a time,
    and this one holds the write lock: every row is committed, and the next ones will be
    stamped at or after the newest."""
    if connection.vendor == "postgresql":
        return horizon.committed_before()
    return Submission.objects.filter(form_id=form_id, status=status).aggregate(
        newest=Max("submitted_at"))["newest"]


def advance_all(form_ids: Iterable) -> None:
    """Move every folder's checkpoint up to the commit horizon (the hourly job)."""
    for form_id in form_ids:
        for status in Status.values:
            advance(form_id, status)


class Changes:
    """What a change moved into and out of the form's folders, to correct the checkpoints."""

    def __init__(self, checkpoints: dict[str, FolderCount]) -> None:
        self.checkpoints = checkpoints
        self.deltas: Counter[str] = Counter()

    def _counted(self, status: str, stamp: datetime) -> bool:
        since = self.checkpoints[status].counted_before
        return since is not None and stamp < since

    def left(self, status: str, stamp: datetime) -> None:
        if self._counted(status, stamp):
            self.deltas[status] -= 1

    def entered(self, status: str, stamp: datetime) -> None:
        if self._counted(status, stamp):
            self.deltas[status] += 1

    def save(self) -> None:
        for status, delta in self.deltas.items():
            if delta:
                FolderCount.objects.filter(pk=self.checkpoints[status].pk).update(
                    count=F("count") + delta)


@contextmanager
def changing(form_id) -> Iterator[Changes]:
    """A transaction that moves the form's rows, holding its checkpoints; report each row
    that leaves or enters a folder, with its stamp, to the ``Changes`` it yields."""
    with transaction.atomic():
        changes = Changes(_lock(form_id))
        yield changes
        changes.save()
