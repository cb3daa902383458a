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
from django.db.models import Count, F, Max, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from config import rawsql
from submissions import horizon
from submissions.models import FolderCount, Status, Submission

# A tail this long is worth folding into the checkpoint when someone reads it.
ADVANCE_AT = 1000
BEGINNING = datetime(1970, 1, 1, tzinfo=UTC)


def _tail(form_id, status: str, since: datetime | None):
    rows = Submission.objects.filter(form_id=form_id, status=status)
    return rows if since is None else rows.filter(submitted_at__gte=since)


def size(form_id, status: str = Status.INBOX) -> int:
    """The folder's size now; moves its checkpoint when the tail has grown long."""
    counted, tail = _checkpoint_and_tail(form_id, status)
    if tail >= ADVANCE_AT:
        advance(form_id, status)
    return counted + tail


@functools.cache
def _size_sql(status: str) -> str:
    # The status is one of two constants, written into the SQL so that the folder's partial
    # index applies.
    assert status in Status.values
    counts, rows = FolderCount._meta.db_table, Submission._meta.db_table
    return (
        f"SELECT COALESCE(c.count, 0), (SELECT count(*) FROM {rows} s "
        f"  WHERE s.form_id = %s AND s.status = '{status}' "
        "   AND s.submitted_at >= COALESCE(c.counted_before, %s)) "
        f"FROM (SELECT 1) AS one LEFT JOIN {counts} c ON c.form_id = %s AND c.status = '{status}'"
    )


def _checkpoint_and_tail(form_id, status: str) -> tuple[int, int]:
    """The checkpoint's count and the rows after it, in one statement."""
    key = rawsql.db_id(Submission._meta.get_field("form").related_model, form_id)
    with connection.cursor() as cursor:
        cursor.execute(_size_sql(status), [key, BEGINNING, key])
        counted, tail = cursor.fetchone()
    return counted, tail


def annotated(forms, **names: str):
    """``forms`` with each named folder's size annotated, e.g. ``inbox_size="inbox"``: one
    query for a whole list (the checkpoints are not moved; a form's own page does that)."""
    for name, status in names.items():
        forms = forms.annotate(**{name: _size_expression(status)})
    return forms


def _size_expression(status: str):
    checkpoint = FolderCount.objects.filter(form=OuterRef("pk"), status=status)
    inner = FolderCount.objects.filter(form=OuterRef(OuterRef("pk")), status=status)
    since = Coalesce(Subquery(inner.values("counted_before")[:1]), Value(BEGINNING))
    tail = (
        Submission.objects.filter(form=OuterRef("pk"), status=status, submitted_at__gte=since)
        .order_by()
        .values("form")
        .annotate(rows=Count("pk"))
        .values("rows")
    )
    return Coalesce(Subquery(checkpoint.values("count")[:1]), 0) + Coalesce(Subquery(tail), 0)


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
