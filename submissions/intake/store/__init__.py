"""Storing an admitted submission: the row, its count toward the month, and what the other
apps record on acceptance (submissions/hooks.py), all or nothing.

Two implementations behind one function, ``store(submission, ticket)``, chosen once at start
by the database: ``pg`` (one statement when Redis reserved the quota, otherwise ``orm``'s
transaction under the owner's row lock) and ``orm`` (one transaction, SQLite's writers
queued in this process).
"""

from __future__ import annotations

from typing import Any

from django.db import connection

from accounts import quota
from accounts.models import current_month
from core.errors import database_unavailable
from core.ids import new_id
from core.infra.dbwriter import one_writer
from forms_app.models import Form
from submissions import field_names
from submissions.intake import admission
from submissions.intake.admission import Ticket
from submissions.intake.store import orm, pg
from submissions.models import Status, Submission

_chosen = pg if connection.vendor == "postgresql" else orm

# A fenced ticket means its counter was seeded again while it ran, a rare event: a second
# one in a row is a flush storm, and the third answers 503.
FENCED_TRIES = 3


def submission_create(
    *,
    form: Form,
    data: list[list[Any]],
    ip: str | None,
    user_agent: str,
    origin: str,
    ticket: Ticket | None = None,
    verdict: dict[str, Any] | None = None,
    submission_id=None,
    subject: str = "",
) -> Submission:
    """Store one accepted submission, count it, and tell the hooks: all or nothing.

    ``ticket`` is the admission of the public endpoint, marked kept once stored; without one
    (operators, tests) the quota is checked here. ``submission_id``: the id the request's
    Idempotency-Key claimed; a new one if None.

    A ticket whose counter was seeded again since it was admitted (a Redis flush or restart,
    an operator's reset) is fenced off by the record; it is admitted again under the counter
    as it is now, which may answer ``monthly_limit_reached``, and stored under the same id.
    """
    if ticket is None:
        ticket = Ticket(form.counted_on_id, current_month(), quota.limit_of(form.counted_on),
                        reserved=False)
    submission = Submission(
        id=submission_id or new_id(), form=form, data=data, ip=ip or None,
        user_agent=user_agent[:512], origin=origin[:300], spam=verdict, subject=subject or None,
    )
    if field_names.has_new(form, data):
        with one_writer():
            field_names.record(form, data)
    for _ in range(FENCED_TRIES):
        try:
            stored = _chosen.store(submission, ticket)
        except quota.Fenced:
            admission.readmit(ticket)
            continue
        ticket.kept = True
        return stored
    raise database_unavailable()  # the counter was seeded again on every try


def submission_hold(
    *, form: Form, data: list[list[Any]], ip: str | None, user_agent: str, origin: str,
    verdict: dict[str, Any], submission_id=None, subject: str = "",
) -> Submission:
    """Keep a submission the filter held in the form's spam folder: not counted, not
    delivered, and its field names are not added to the form's (a bot cannot use up the 500)."""
    with one_writer():
        return Submission.objects.create(
            id=submission_id or new_id(), form=form, data=data, ip=ip or None,
            user_agent=user_agent[:512], origin=origin[:300], status=Status.SPAM, spam=verdict,
            subject=subject or None,
        )
