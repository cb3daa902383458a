"""Deliveries sent again: the sweeper re-queues what is due with no live message and what a
vanished worker held; an owner or operator gives failed deliveries a fresh set of attempts."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.db.models import Q

from accounts.models import User
from core.errors import ServiceError, default_error, forbidden
from core.infra import dbclock
from forms_app.models import Form
from integrations import selectors
from integrations.delivery import nudge
from integrations.delivery.enqueue import deliveries_queue
from integrations.models import TEST, Delivery, DeliveryState
from teams.roles import Role

REQUEUE_AFTER = timedelta(minutes=5)
ORPHANED_AFTER = timedelta(seconds=5)


def delivery_sweep(limit: int = 1000) -> int:
    """Re-queue due deliveries that have no live message, and those of vanished workers."""
    now = dbclock.now()
    unsent = Q(queued_at__isnull=True) | Q(queued_at__lt=now - REQUEUE_AFTER)
    due = Q(state=DeliveryState.PENDING, next_attempt_at__lte=now) & unsent
    abandoned = Q(state=DeliveryState.IN_PROGRESS, lease_until__lt=now)
    ids = list(
        Delivery.objects.filter(due | abandoned)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:limit]
    )
    if ids:
        Delivery.objects.filter(pk__in=ids).update(queued_at=now)
        nudge.take_flag()  # it may be up with its message lost: this message replaces it
        deliveries_queue(ids, force=True, sweeping=True)
    elif _orphaned(now):
        deliveries_queue([], force=True, sweeping=True)
    return len(ids)


def _orphaned(now) -> bool:
    """Rows due a while with no worker on them: commits that saw a worker's flag up left
    them to that worker, and it died (a live one keeps the flag up, and takes them within
    milliseconds). Their message counts as sent, so the check above does not see them."""
    if nudge.is_up():
        return False
    stale = now - ORPHANED_AFTER
    return Delivery.objects.filter(state=DeliveryState.PENDING,
                                   next_attempt_at__lte=stale).exists()


def not_retryable() -> ServiceError:
    return ServiceError(
        "not_retryable",
        "Only a failed delivery of an enabled integration can be retried.",
        409,
    )


def delivery_retry(*, owner: User, delivery_id: str) -> Delivery:
    """One failed delivery of the owner's, given a fresh set of attempts; 409 for any other
    (pending, delivered, a test send, or its integration disabled)."""
    try:
        delivery = Delivery.objects.get(pk=uuid.UUID(str(delivery_id)),
                                        integration__in=selectors.reachable(owner))
    except (ValueError, Delivery.DoesNotExist):
        raise ServiceError(*default_error(404), 404) from None
    if not selectors.reachable(owner, Role.EDITOR).filter(pk=delivery.integration_id).exists():
        raise forbidden("Retrying a delivery needs the editor role on the form's team.")
    if not deliveries_retry(delivery_ids=[delivery.pk]):
        raise not_retryable()
    delivery.refresh_from_db()
    return delivery


def deliveries_retry(
    *,
    integration_id: str | uuid.UUID | None = None,
    form: Form | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    delivery_ids: list | None = None,
) -> int:
    """Give failed submission deliveries a fresh set of attempts; return how many.

    A disabled integration's deliveries are left as they are: they would only fail again at
    once. Enabling the integration first makes them retryable.
    """
    rows = Delivery.objects.filter(
        state=DeliveryState.FAILED, integration__enabled=True
    ).exclude(event_type=TEST)
    if integration_id is not None:
        rows = rows.filter(integration_id=integration_id)
    if form is not None:
        rows = rows.filter(submission__form=form)
    if since is not None:
        rows = rows.filter(created_at__gte=since)
    if until is not None:
        rows = rows.filter(created_at__lt=until)
    if delivery_ids is not None:
        rows = rows.filter(pk__in=delivery_ids)
    ids = list(rows.values_list("pk", flat=True))
    now = dbclock.now()
    count = Delivery.objects.filter(pk__in=ids, state=DeliveryState.FAILED).update(
        state=DeliveryState.PENDING,
        attempts=0,
        next_attempt_at=now,
        queued_at=now,
        finished_at=None,
        last_error=None,
    )
    if ids:
        deliveries_queue(ids, force=True)
    return count

