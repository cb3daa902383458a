"""Writing deliveries with the submission that causes them, and nudging workers after commit."""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import Q

from accounts.models import User
from core.infra import dbclock, rawsql
from forms_app.models import Form
from integrations.delivery import backends, messages, nudge
from integrations.models import CREATED, Delivery, DeliveryState, Integration
from submissions.models import Submission


def deliveries_insert(
    submission_id, owner_id, form_id, *, missing_only: bool = False, only_if: str = ""
) -> tuple[str, list]:
    """SQL and parameters that insert one pending delivery per matching integration of a
    submission, answering their ids: one statement for any number of integrations.

    ``missing_only`` skips integrations that already have a delivery of this submission (a
    rescue of one that was in the inbox before: what was made, or failed, stays as it is).
    ``only_if``: a condition (SQL without parameters) that must hold too, as a statement's
    own submission insert having inserted a row."""
    now = connection.ops.adapt_datetimefield_value(dbclock.now())
    sql = (
        f"INSERT INTO {Delivery._meta.db_table} (id, integration_id, submission_id, "
        "event_type, state, attempts, next_attempt_at, queued_at, created_at) "
        f"SELECT {backends.sql().new_id}, i.id, %s, %s, %s, 0, %s, %s, %s "
        f"FROM {Integration._meta.db_table} i WHERE i.enabled = %s "
        "AND (i.form_id = %s OR (i.form_id IS NULL AND i.owner_id = %s)) AND i.events LIKE %s"
    )
    if missing_only:
        sql += (
            f" AND NOT EXISTS (SELECT 1 FROM {Delivery._meta.db_table} d "
            "WHERE d.integration_id = i.id AND d.submission_id = %s)"
        )
    if only_if:
        sql += f" AND {only_if}"
    sql += " RETURNING id"
    params = [
        rawsql.db_id(Submission, submission_id),
        CREATED,
        DeliveryState.PENDING,
        now,
        now,
        now,
        True,
        rawsql.db_id(Form, form_id),
        None if owner_id is None else rawsql.db_id(User, owner_id),
        f"%{CREATED}%",  # those that receive it (Integration.events)
    ]
    if missing_only:
        params.append(rawsql.db_id(Submission, submission_id))
    return sql, params


def deliveries_record(*, submission: Submission, missing_only: bool = False) -> list:
    """Inside the submission's transaction: one pending delivery per matching integration.

    Workers are nudged after commit."""
    form = submission.form
    sql, params = deliveries_insert(
        submission.pk, form.account_wide_owner_id, form.pk, missing_only=missing_only
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        ids = [row[0] for row in cursor.fetchall()]
    if ids:
        transaction.on_commit(lambda: deliveries_queue(ids), robust=True)
    return ids


def deliveries_drop_pending(*, submission_id) -> int:
    """A submission marked spam is not delivered any more: its deliveries still waiting are
    dropped. One a worker has already taken goes ahead (it may be on the wire), and one made or
    failed stays in the ledger."""
    return Delivery.objects.filter(
        submission_id=submission_id, state=DeliveryState.PENDING
    ).delete()[0]


def deliveries_hold(chosen: Q) -> None:
    """Hold the ``chosen`` deliveries until the transaction ends, in id order, before their
    submission or form deletes them: a worker recording an attempt at one either commits
    first (and its attempt goes with the delivery) or waits and then finds it gone, records
    nothing and sends nothing more. Without this a worker's attempt could land between the
    delete's reading of the attempts and its removal of the delivery, and fail its commit."""
    rows = Delivery.objects.select_for_update().filter(chosen).order_by("pk")
    list(rows.values_list("pk"))


def deliveries_of_form(form_id) -> Q:
    """A form's deliveries: those of its submissions, and those of its own integrations (a
    test send, a deletion's event)."""
    return (Q(submission_id__in=Submission.objects.filter(form_id=form_id).values("pk"))
            | Q(integration_id__in=Integration.objects.filter(form_id=form_id).values("pk")))


def deliveries_queue(ids: list, *, force: bool = False, sweeping: bool = False) -> None:
    """Nudge workers about due deliveries ``ids``; one message covers any number of them.

    Only the caller that raises the flag publishes (see integrations/delivery/nudge.py);
    ``force`` publishes anyway (a retry, or the sweeper, which cannot know whether the last
    message was lost). The sweeper tries the broker even during its pause after a failure: it
    runs in the background, and must find the broker back at once. If the broker is away, the
    rows are marked unsent and the sweeper sends them.
    """
    if not (nudge.raise_flag() or force):
        return
    if not messages.wake_workers(f"{len(ids)} deliveries", always_try=sweeping):
        nudge.take_flag()  # no message is on its way: the next commit must try again
        nudge.forget()
        Delivery.objects.filter(pk__in=ids).update(queued_at=None)
