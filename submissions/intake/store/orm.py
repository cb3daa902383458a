"""Storing an admitted submission in one transaction, through the ORM: every database, and
PostgreSQL whenever the one statement cannot serve (pg.py)."""

from __future__ import annotations

from django.db import transaction

from accounts import quota
from accounts.models import User
from core.infra.dbwriter import one_writer
from submissions import hooks
from submissions.intake import admission
from submissions.intake.admission import Ticket
from submissions.models import Submission


def store(submission: Submission, ticket: Ticket, *, lock_owner: bool = False) -> Submission:
    """``lock_owner``: order concurrent quota checks by the owner's row lock (PostgreSQL;
    SQLite runs write transactions one at a time already)."""
    with one_writer():
        return _store(submission, ticket, lock_owner)


@transaction.atomic
def _store(template: Submission, ticket: Ticket, lock_owner: bool) -> Submission:
    form = template.form
    if not ticket.reserved:
        _check_quota(form.counted_on_id, ticket, lock_owner)
    # A fresh row from the template: a fenced try that rolled back must leave it untouched.
    submission = Submission.objects.create(
        id=template.pk, form=form, data=template.data, ip=template.ip,
        user_agent=template.user_agent, origin=template.origin, spam=template.spam,
        subject=template.subject,
    )
    submission.form = form
    hooks.accepted(submission)
    # Counted last (the lock order); under the admission's generation when Redis reserved it.
    quota.record(form.counted_on_id, ticket.month, ticket.generation if ticket.reserved else None)
    return submission


def _check_quota(owner_id, ticket: Ticket, lock_owner: bool) -> None:
    """Not reserved by Redis: SQLite runs write transactions one at a time; PostgreSQL without
    Redis (one web process, not the scaled setup) orders concurrent checks by the owner's row
    lock, FOR NO KEY UPDATE: it must not block the foreign-key checks of a one-statement store
    (docs/exactness.md, "Lock order")."""
    if lock_owner:
        User.objects.select_for_update(no_key=True).filter(pk=owner_id).values_list("pk").get()
    if ticket.fence:
        admission.fence_redis_reservations(ticket)
    elif quota.used(owner_id, ticket.month) >= ticket.limit:
        raise admission.monthly_limit_reached()
