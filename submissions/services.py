from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction

from accounts import quota
from accounts.models import User, current_month
from forms_app.models import Form
from integrations.services import deliveries_queue, deliveries_record
from submissions import field_names, store
from submissions.admission import Ticket, monthly_limit_reached
from submissions.models import Submission


def submission_create(
    *,
    form: Form,
    data: list[list[Any]],
    ip: str | None,
    user_agent: str,
    origin: str,
    ticket: Ticket | None = None,
) -> Submission:
    """Store one accepted submission, count it, and record its deliveries: all or nothing.

    ``ticket`` is the admission of the public endpoint; without one (operators, tests) the
    quota is checked here. If storing fails, a quota reserved in Redis is given back.
    """
    if ticket is None:
        ticket = Ticket(form.owner_id, current_month(), quota.limit_of(form.owner), reserved=False)
    try:
        if field_names.has_new(form, data):
            with _sqlite_writer():
                field_names.record(form, data)
        if ticket.reserved and store.usable():
            return _store_in_one_statement(form, data, ip, user_agent, origin, ticket)
        with _sqlite_writer():
            return _store(form, data, ip, user_agent, origin, ticket)
    except BaseException:
        ticket.release()
        raise


_writer = threading.Lock()


@contextmanager
def _sqlite_writer():
    """SQLite takes one writer at a time, and makes the others poll with growing sleeps: under
    load that turned into second-long tails. This process's threads queue here instead and get
    the lock the moment it is free; only other processes (the worker) still meet the poll."""
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        yield
        return
    with _writer:
        yield


def _store_in_one_statement(
    form: Form, data: list[list[Any]], ip: str | None, user_agent: str, origin: str, ticket: Ticket
) -> Submission:
    submission, delivery_ids = store.store(
        form=form,
        data=data,
        ip=ip or None,
        user_agent=user_agent[:512],
        origin=origin[:300],
        month=ticket.month,
    )
    if delivery_ids:
        deliveries_queue(delivery_ids)  # the statement has committed
    return submission


@transaction.atomic
def _store(
    form: Form, data: list[list[Any]], ip: str | None, user_agent: str, origin: str, ticket: Ticket
) -> Submission:
    if not ticket.reserved:
        _check_quota_in_transaction(form.owner_id, ticket)
    submission = Submission.objects.create(
        form=form,
        data=data,
        ip=ip or None,
        user_agent=user_agent[:512],
        origin=origin[:300],
    )
    submission.form = form
    deliveries_record(submission=submission)
    quota.record(form.owner_id, ticket.month)
    return submission


def _check_quota_in_transaction(owner_id, ticket: Ticket) -> None:
    """Without Redis: SQLite runs write transactions one at a time; PostgreSQL without Redis
    (one web process, not the scaled setup) orders concurrent checks by the owner's row lock."""
    if connection.vendor != "sqlite":
        User.objects.select_for_update().filter(pk=owner_id).values_list("pk").get()
    if quota.used(owner_id, ticket.month) >= ticket.limit:
        raise monthly_limit_reached()


@transaction.atomic
def submission_delete(*, submission: Submission) -> None:
    """Erase one submission for good (data-subject requests); monthly usage stays counted."""
    submission.delete()
