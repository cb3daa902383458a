"""The owner's changes to stored submissions (rescue, spam marks, deletions) and the purges.
Storing a public submission is intake's (submissions/intake/store/)."""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from django.db import OperationalError, transaction
from django.db.models import Exists, OuterRef, Q
from django.db.models.functions import Coalesce
from django.http import Http404

from accounts import quota
from accounts.models import User, current_month
from audit.services import Target, record
from core import clock
from core.errors import database_unavailable
from core.infra.dbtime import DatabaseNow
from core.infra.dbwriter import one_writer
from files.models import StoredFile
from files.services import delete_files_of
from forms_app.models import Form
from submissions import field_names, folders, hooks, learning
from submissions.intake import admission
from submissions.intake.admission import Ticket
from submissions.intake.store import FENCED_TRIES
from submissions.models import Status, Submission

Move = TypeVar("Move", bound=Callable[..., Submission])


def _audit(form: Form, actor: User | None, action: str, details: dict[str, Any]) -> None:
    """An owner's change to a form's submissions, in the form's log: which ones, never their
    values."""
    record(owner_id=form.owner_id, actor=actor, action=action, team_id=form.team_id,
           target=Target("form", form.pk, form.name), details=details)


def _moved(form: Form, actor: User | None, action: str, submission: Submission) -> None:
    _audit(form, actor, action, {"count": 1, "ids": [str(submission.pk)]})


def _gone_is_404(move: Move) -> Move:
    """A move of a submission that its form's delete, or its own, took after the caller had
    found it: 404, as if it had been gone already (docs/exactness.md, "Deleting races
    nothing into an error"). Nothing of the move stays: its transaction rolled back, and a
    rescue's reservation is given back."""

    @functools.wraps(move)
    def moved(*args: Any, **kwargs: Any) -> Submission:
        try:
            return move(*args, **kwargs)
        except (Submission.DoesNotExist, Form.DoesNotExist) as gone:
            raise Http404("No such submission.") from gone

    return moved  # type: ignore[return-value]


@_gone_is_404
def submission_rescue(*, submission: Submission, actor: User | None = None) -> Submission:
    """"Not spam": into the inbox at this moment, counted and delivered; it teaches the filter.

    submitted_at becomes now and it leaves its place in the feed, to be placed anew after
    every row there (submissions/feed/), so incremental pull syncs (which read past their
    cursor) see it; received_at keeps the first arrival. One already in the inbox stays as it
    is. One that was in the inbox before it was marked spam was counted then, and is not
    counted again; it is delivered only to the integrations that have no delivery of it yet.
    """
    form = submission.form
    # One that was never counted is counted now: at the monthly limit it stays where it is.
    if not was_counted(submission) and submission.status == Status.SPAM:
        with admission.rescue_admitted(form.counted_on, str(submission.pk)) as ticket:
            # Kept once moved; another rescue may have moved it first.
            ticket.kept = bool(_rescue_admitted(submission, form, ticket, actor))
    else:
        _rescue_admitted(submission, form, None, actor)
    submission.refresh_from_db()
    return submission


def _rescue_admitted(submission: Submission, form: Form, ticket: Ticket | None,
                     actor: User | None) -> int:
    """The move, admitted again if its reservation's counter was seeded again meanwhile."""
    for _ in range(FENCED_TRIES):
        try:
            return _rescue(submission, form, ticket, actor)
        except quota.Fenced:
            assert ticket is not None  # only a reserved ticket is fenced
            # The attempt rolled back: the copy in hand still shows the move it made.
            submission.refresh_from_db()
            admission.readmit(ticket)
    raise database_unavailable()


def _rescue(submission: Submission, form: Form, ticket: Ticket | None,
            actor: User | None) -> int:
    """The move itself; how many rows moved (0: it was in the inbox already)."""
    with one_writer(), folders.changing(form.pk) as changes:
        status, position = _held(submission)
        counted = was_counted(submission)
        moved = Submission.objects.filter(pk=submission.pk, status=Status.SPAM).update(
            status=Status.INBOX,
            received_at=Coalesce("received_at", "submitted_at"),
            submitted_at=DatabaseNow(),
            position=None,
        )
        _teach(submission, is_spam=False)  # confirming one in the inbox teaches too
        if moved:
            field_names.record(form, submission.data)
            submission.refresh_from_db()
            submission.form = form
            changes.left(status, position)
            changes.entered(Status.INBOX, None)
            hooks.accepted(submission, again=counted)
            _moved(form, actor, "submissions.marked_not_spam", submission)
            if not counted:
                month = ticket.month if ticket is not None else current_month()
                if ticket is not None and ticket.fence:
                    admission.fence_redis_reservations(ticket)
                fence = ticket.generation if ticket is not None and ticket.reserved else None
                quota.record(form.counted_on_id, month, fence)
                transaction.on_commit(lambda: admission.recount(form.counted_on_id, month))
    return moved


def was_counted(submission: Submission) -> bool:
    """Whether the submission has been in the inbox (and so counted toward the month): the
    filter held it on arrival only if its verdict has reasons, and a rescue sets received_at."""
    return _has_been_in_inbox(submission.spam, submission.received_at)


def _has_been_in_inbox(verdict: dict[str, Any] | None, received_at) -> bool:
    held_on_arrival = bool((verdict or {}).get("reasons"))
    return not held_on_arrival or received_at is not None


@_gone_is_404
def submission_mark_spam(*, submission: Submission, actor: User | None = None) -> Submission:
    """"Spam": into the spam folder, out of the pull API and exports. Deliveries made stay
    made, those still waiting are dropped, and the monthly count is not given back."""
    with one_writer(), folders.changing(submission.form_id) as changes:
        status, position = _held(submission)
        if status == Status.INBOX:
            Submission.objects.filter(pk=submission.pk).update(status=Status.SPAM)
            changes.left(Status.INBOX, position)
            changes.entered(Status.SPAM, position)
            _moved(submission.form, actor, "submissions.marked_spam", submission)
        hooks.marked_spam(submission.form, submission.pk, was_inbox=status == Status.INBOX)
        _teach(submission, is_spam=True)
    submission.refresh_from_db()
    return submission


def _held(submission: Submission) -> tuple[str, Any]:
    """The submission's folder and place in the feed, locked until the change commits."""
    return Submission.objects.select_for_update().values_list("status", "position").get(
        pk=submission.pk)


def _teach(submission: Submission, *, is_spam: bool) -> None:
    """A mark teaches the filter once: marking the same way again adds nothing."""
    mark = "spam" if is_spam else "ham"
    verdict = dict(submission.spam or {})
    previous = verdict.get("mark")
    if previous == mark:
        return
    verdict["mark"] = mark
    Submission.objects.filter(pk=submission.pk).update(spam=verdict)
    learning.learn(
        owner_id=submission.form.counted_on_id, data=submission.data, is_spam=is_spam,
        reverses=previous is not None,
    )


SPAM_KEPT = timedelta(days=30)
PURGE_BATCH = 500


def spam_purge(batch: int = PURGE_BATCH) -> int:
    """Delete what has sat in a spam folder for 30 days."""
    cutoff = clock.now() - SPAM_KEPT
    # The status again at delete time: a rescue in between keeps its submission.
    return _delete_in_batches(
        Submission.objects.filter(status=Status.SPAM, submitted_at__lt=cutoff), batch,
        still=Q(status=Status.SPAM),
    )


def retention_purge(batch: int = PURGE_BATCH) -> int:
    """Delete each form's submissions older than its retentionDays, counted from their
    arrival: a rescue from the spam folder restamps submitted_at but not received_at."""
    deleted = 0
    for form_id, days in Form.objects.exclude(retention_days=None).values_list(
        "pk", "retention_days"
    ):
        cutoff = clock.now() - timedelta(days=days or 0)
        mine = Submission.objects.filter(form_id=form_id)
        # Each query walks one partial index: (form, submitted_at, id) of its folder.
        for status in Status.values:
            deleted += _delete_in_batches(
                mine.filter(status=status, submitted_at__lt=cutoff), batch
            )
        rescued = mine.filter(status=Status.INBOX, submitted_at__gte=cutoff,
                              received_at__lt=cutoff)
        deleted += _delete_in_batches(rescued, batch)
    return deleted


def _delete_in_batches(rows, batch: int, still: Q | None = None) -> int:
    """Delete ``rows`` (with their deliveries) ``batch`` at a time, each in its own short
    transaction, so no delete holds its locks for long or stalls new submissions."""
    deleted = 0
    while True:
        found = list(rows.order_by().values_list("pk", "form_id")[:batch])
        if not found:
            return deleted
        by_form = defaultdict(list)
        for pk, form_id in found:
            by_form[form_id].append(pk)
        for form_id, ids in by_form.items():
            chosen = Submission.objects.filter(pk__in=ids)
            deleted += _delete(form_id, chosen if still is None else chosen.filter(still))
        if len(found) < batch:
            return deleted


def _delete(form_id, chosen, *, announce_every: bool = False,
            then: Callable[[list], None] | None = None) -> int:
    """Delete the ``chosen`` rows of one form (with their deliveries), correcting its folder
    counts, and announce ``submission.deleted`` for each that downstream may hold (it has
    been in the inbox), or for each one when ``announce_every``; how many went. Every
    deletion comes here: the owner's, retention, the spam purge, an erasure. ``then`` is
    told the ids that went, in the same transaction (the owner's deletions are audited)."""
    with folders.unless_form_deleted(form_id) as form, one_writer(), \
            folders.changing(form_id) as changes:
        locked = list(chosen.select_for_update().values_list(
            "pk", "status", "position", "spam", "received_at"))
        for _, status, position, _, _ in locked:
            changes.left(status, position)
        ids = [row[0] for row in locked]
        # What hangs from them (their deliveries) is held next, in the lock order, so a
        # worker recording an attempt either ends first or finds the delivery gone.
        hooks.deleting(ids)
        gone = Submission.objects.filter(pk__in=ids).delete()[1]
        known = [row[0] for row in locked
                 if announce_every or _has_been_in_inbox(row[3], row[4])]
        if known:
            hooks.deleted(Form.objects.get(pk=form_id), known)
        # Their files go once the rows are surely gone (files/services.py).
        transaction.on_commit(lambda: delete_files_of(ids), robust=True)
        removed = gone.get(Submission._meta.label, 0)
        if then is not None and ids:
            then(ids)
    return 0 if form.deleted else removed  # the form's delete took them first


ORPHAN_AGE = timedelta(days=1)


def orphan_files_purge() -> int:
    """Files whose submission was never stored (the process died between storing the files
    and the submission): gone after a day, with their bytes given back to the quota."""
    cutoff = clock.now() - ORPHAN_AGE
    stored = Submission.objects.filter(pk=OuterRef("submission_id"))
    orphans = StoredFile.objects.filter(created_at__lt=cutoff).exclude(Exists(stored))
    return delete_files_of(set(orphans.values_list("submission_id", flat=True)[:PURGE_BATCH]))


# How many times a form's delete gives its row back because another transaction held one of
# the submissions that arrived meanwhile, before it takes the row regardless.
FORM_LOCK_PASSES = 20


def form_submissions_hold(form_id) -> list:
    """For a form's delete, inside its transaction: hold the form's checkpoints, all its
    submissions and then the form's row, in the lock order (docs/exactness.md), and delete
    the submissions' files; the ids held.

    Once the form's row is held no new submission can commit (its foreign-key check waits
    for the delete and then fails: the post is a 404), so the rows held are all the form
    will ever have. One that committed between the two steps is locked after the form, but
    without waiting for it (NOWAIT): a worker holding it could be waiting for the form. When
    another transaction holds one, the form's row is given back (a savepoint) and the pass
    runs again. Under a steady flood of posts the first pass ends it: while the form is held
    nothing new commits, and what committed before is nobody's but its own post's."""
    folders.hold(form_id)
    for _ in range(FORM_LOCK_PASSES):
        held = _form_held_over(form_id, _hold_submissions(form_id))
        if held is not None:
            ids = held
            break
    else:
        _hold_form(form_id)
        ids = _hold_submissions(form_id)
    delete_files_of(ids)  # the rows now, the objects once the delete commits
    return ids


def _hold_submissions(form_id, *, nowait: bool = False) -> list:
    rows = Submission.objects.select_for_update(nowait=nowait).filter(form_id=form_id)
    return list(rows.order_by("pk").values_list("pk", flat=True))


def _hold_form(form_id) -> None:
    list(Form.objects.select_for_update().filter(pk=form_id).values_list("pk"))


def _form_held_over(form_id, held: list) -> list | None:
    """Take the form's row, and keep it with every submission the form has: the ``held``
    ones, and those that committed since, if none of them is held by another transaction
    (SQLite has one writer: none can have committed). None when the row was given back."""
    savepoint = transaction.savepoint()
    _hold_form(form_id)
    if Submission.objects.filter(form_id=form_id).count() == len(held):
        transaction.savepoint_commit(savepoint)
        return held  # held rows cannot go, so the same number is the same rows
    try:
        every = _hold_submissions(form_id, nowait=True)
    except OperationalError:  # another transaction holds one of them: let it go first
        transaction.savepoint_rollback(savepoint)
        return None
    transaction.savepoint_commit(savepoint)
    return every


def _deleted_entry(form: Form, actor: User | None) -> Callable[[list], None]:
    def entry(ids: list) -> None:
        _audit(form, actor, "submissions.deleted",
               {"count": len(ids), "ids": [str(ident) for ident in ids]})
    return entry


def submission_delete(*, submission: Submission, actor: User | None = None) -> None:
    """Erase one submission for good (data-subject requests); monthly usage stays counted."""
    _delete(submission.form_id, Submission.objects.filter(pk=submission.pk),
            then=_deleted_entry(submission.form, actor))


def submissions_erase(*, form_id, ids: list) -> int:
    """Delete the form's submissions ``ids`` as any deletion is (an erasure by address), and
    announce every one of them, spam held on arrival too: the contract has an erasure emit
    ``submission.deleted`` for each submission it removes."""
    return _delete(form_id, Submission.objects.filter(pk__in=ids), announce_every=True)


def submissions_delete(*, form: Form, ids: list, actor: User | None = None) -> int:
    """Erase the owner's chosen submissions of ``form`` (the inbox's bulk Delete); how many."""
    return _delete(form.pk, Submission.objects.filter(form=form, pk__in=ids),
                   then=_deleted_entry(form, actor))


@transaction.atomic
def submissions_exported(*, form: Form, kind: str, matching: bool,
                         actor: User | None = None) -> None:
    """An export is a read, but one the log keeps: who took a copy of what, and when."""
    _audit(form, actor, "submissions.exported", {"format": kind, "matching": matching})


def submissions_mark_read(*, form: Form, ids: list, read: bool = True) -> int:
    """Mark the chosen submissions of ``form`` read (now) or unread; how many changed."""
    chosen = Submission.objects.filter(form=form, pk__in=ids)
    if read:
        return chosen.filter(read_at__isnull=True).update(read_at=clock.now())
    return chosen.filter(read_at__isnull=False).update(read_at=None)
