"""How many submissions a form's folder (inbox or spam) holds, without COUNT(*) over it.

A folder's size is a checkpoint and a tail. ``FolderCount`` holds how many of the folder's rows
are placed in the feed at or before its ``counted_upto`` (submissions/feed/); the rest are
counted when read: the rows placed after it (stamped at or after its ``counted_before``, so the
folder's index bounds them), and the few not placed yet. Intake, the hot path, writes nothing
here: a new row is not placed yet, and is placed after every checkpoint there is.

What moves a row counted by a checkpoint into or out of a folder (a mark, a rescue, a delete, a
purge) corrects the count in its own transaction, holding the form's two ``FolderCount`` rows
for the whole change. Moving a checkpoint holds them too, so a checkpoint never moves in the
middle of a change, and the rows it counts are settled: placed, so committed. A read that
finds a long tail moves the checkpoint up to the feed's last position, and so does the hourly
purge job.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.db import IntegrityError, connection, transaction
from django.db.models import F

from core.infra import rawsql
from forms_app.models import Form
from submissions import feed
from submissions.models import FolderCount, Status, Submission

# A tail this long is worth folding into the checkpoint when someone reads it.
ADVANCE_AT = 1000
BEGINNING = feed.BEGINNING


def size(form_id, status: str = Status.INBOX) -> int:
    """The folder's size now (see ``sizes``)."""
    return sizes([form_id], [status])[form_id, status]


def sizes(form_ids: list, statuses=Status.values) -> dict[tuple, int]:
    """Each form's folder sizes, by (form id, status), in two statements however many forms:
    their checkpoints, then every tail counted through its folder's index. A tail that has
    grown long is folded into its checkpoint."""
    keys = [(form_id, status) for form_id in form_ids for status in statuses]
    if not keys:
        return {}
    checkpoints = _checkpoints(form_ids)
    tails = _tails(keys, checkpoints)
    for key, tail in zip(keys, tails, strict=True):
        if tail >= ADVANCE_AT:
            advance(*key)
    return {
        key: checkpoints.get(_db_key(key), (0, None))[0] + tail
        for key, tail in zip(keys, tails, strict=True)
    }


def _db_key(key: tuple) -> tuple:
    form_id, status = key
    return rawsql.db_id(Form, form_id), status


def _checkpoints(form_ids: list) -> dict[tuple, tuple]:
    """(count, counted_before, counted_upto) by (form id as the database holds it, status).
    The stamp stays as the database gave it, to be handed straight back."""
    ids = [rawsql.db_id(Form, form_id) for form_id in form_ids]
    sql = (
        f"SELECT form_id, status, count, counted_before, counted_upto "
        f"FROM {FolderCount._meta.db_table} WHERE form_id IN ({rawsql.placeholders(len(ids))})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, ids)
        return {(form_id, status): (count, since, upto)
                for form_id, status, count, since, upto in cursor.fetchall()}


def _tails(keys: list[tuple], checkpoints: dict[tuple, tuple]) -> list[int]:
    """The rows after each checkpoint, one subquery per folder in one statement: those placed
    after it, and those not placed yet (the sequencer's small index). Each status is one of
    two constants, written into the SQL so that the folder's partial index applies, and each
    checkpoint is passed as a value: a correlated one leaves the planner guessing a third of
    the rows, and it scans the table."""
    table = Submission._meta.db_table
    counts, params = [], []
    for key in keys:
        form_id, status = _db_key(key)
        assert status in Status.values
        counts.append(f"(SELECT count(*) FROM {table} WHERE form_id = %s "
                      f"AND status = '{status}' AND submitted_at >= %s AND position > %s) + "
                      f"(SELECT count(*) FROM {table} WHERE position IS NULL "
                      f"AND form_id = %s AND status = '{status}')")
        _, since, upto = checkpoints.get((form_id, status), (0, None, None))
        params += [form_id, since or BEGINNING, upto or 0, form_id]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(counts)}", params)
        return list(cursor.fetchone())


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


def hold(form_id) -> None:
    """Hold the form's checkpoints until the transaction ends, the first lock of the order
    (docs/exactness.md, "Lock order"), for a change that moves no row but removes them all
    (the form's delete)."""
    _lock(form_id)


class Watch:
    deleted = False  # the form was deleted meanwhile, and the transaction rolled back


@contextmanager
def unless_form_deleted(form_id) -> Iterator[Watch]:
    """Around a transaction that takes the form's checkpoints: when the form's delete held
    them first and then committed, the checkpoints made afresh for the form that is gone
    fail their foreign key at this commit. That transaction is then over with nothing done,
    the form's rows having gone with it (``Watch.deleted``); any other failure is raised."""
    watch = Watch()
    try:
        yield watch
    except IntegrityError:
        if Form.objects.filter(pk=form_id).exists():
            raise
        watch.deleted = True


def advance(form_id, status: str) -> None:
    """Place the rows committed so far in the feed, and fold the folder's placed tail into
    its checkpoint."""
    feed.catch_up()
    with unless_form_deleted(form_id), transaction.atomic():
        checkpoint = _lock(form_id)[status]
        upto, newest = feed.placed_upto()
        done = checkpoint.counted_upto or 0
        if upto <= done:
            return
        placed = Submission.objects.filter(
            form_id=form_id, status=status,
            submitted_at__gte=checkpoint.counted_before or BEGINNING,
            position__gt=done, position__lte=upto)
        FolderCount.objects.filter(pk=checkpoint.pk).update(
            count=F("count") + placed.count(), counted_upto=upto, counted_before=newest)


def advance_all(form_ids: Iterable) -> None:
    """Move every folder's checkpoint up to the feed's last position (the hourly job)."""
    for form_id in form_ids:
        for status in Status.values:
            advance(form_id, status)


class Changes:
    """What a change moved into and out of the form's folders, to correct the checkpoints."""

    def __init__(self, checkpoints: dict[str, FolderCount]) -> None:
        self.checkpoints = checkpoints
        self.deltas: Counter[str] = Counter()

    def _counted(self, status: str, position: int | None) -> bool:
        upto = self.checkpoints[status].counted_upto
        return upto is not None and position is not None and position <= upto

    def left(self, status: str, position: int | None) -> None:
        if self._counted(status, position):
            self.deltas[status] -= 1

    def entered(self, status: str, position: int | None) -> None:
        if self._counted(status, position):
            self.deltas[status] += 1

    def save(self) -> None:
        for status, delta in self.deltas.items():
            if delta:
                FolderCount.objects.filter(pk=self.checkpoints[status].pk).update(
                    count=F("count") + delta)


@contextmanager
def changing(form_id) -> Iterator[Changes]:
    """A transaction that moves the form's rows, holding its checkpoints; report each row
    that leaves or enters a folder, with its place in the feed, to the ``Changes`` it
    yields."""
    with transaction.atomic():
        changes = Changes(_lock(form_id))
        yield changes
        changes.save()
