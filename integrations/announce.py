"""Telling downstream of a change to submissions it may hold: ``submission.deleted`` and
``submission.spam`` (contract, "Event subscriptions and erasure").

Called inside the transaction of the change, so the events exist exactly when the change
does; each is one delivery per receiving integration, sent by the outbox like any other. The
body is stored whole in the delivery: a deleted submission cannot be read when it is sent.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.db.models import Q

from core import clock
from forms_app.models import Form
from integrations import events
from integrations.delivery.enqueue import deliveries_queue
from integrations.models import CREATED, DELETED, SPAM, Delivery, DeliveryState, Integration


def receivers(form: Form, event_type: str) -> list:
    """The enabled integrations that receive ``event_type`` for the form: its own, and its
    owner's account-wide ones (enqueue.py's rule)."""
    account_wide = form.account_wide_owner_id
    return list(
        Integration.objects.filter(
            Q(form_id=form.pk) | Q(form__isnull=True, owner_id=account_wide),
            enabled=True,
            events__contains=event_type,
        ).values_list("pk", flat=True)
    )


def _announce(event_type: str, form: Form, submission_ids: Iterable, *, linked: bool) -> list:
    targets = receivers(form, event_type)
    if not targets:
        return []
    now = clock.now()
    rows = [
        Delivery(
            integration_id=target,
            submission_id=submission_id if linked else None,
            event_type=event_type,
            payload=events.change_event(event_type, form, submission_id),
            next_attempt_at=now,
            queued_at=now,
        )
        for submission_id in submission_ids
        for target in targets
    ]
    Delivery.objects.bulk_create(rows)
    ids = [row.pk for row in rows]
    transaction.on_commit(lambda: deliveries_queue(ids), robust=True)
    return ids


def submissions_deleted(form: Form, submission_ids: list) -> list:
    """Inside the deletion's transaction. The deliveries name no submission: theirs is gone."""
    return _announce(DELETED, form, submission_ids, linked=False)


def submission_marked_spam(form: Form, submission_id) -> list:
    """Inside the mark's transaction; the delivery stays in the submission's ledger."""
    return _announce(SPAM, form, [submission_id], linked=True)


def went_out(submission_id) -> bool:
    """Whether the submission had left the outbox: one of its deliveries was made (or is on
    the wire), or none of them was still waiting. One marked spam while all of them wait is
    never delivered (the mark drops them), so nobody downstream has it to hear about."""
    created = Delivery.objects.filter(submission_id=submission_id, event_type=CREATED)
    sent = created.filter(state__in=[DeliveryState.DELIVERED, DeliveryState.IN_PROGRESS])
    return sent.exists() or not created.filter(state=DeliveryState.PENDING).exists()
