"""Recording attempts, fenced by their claim: the row's new state, the attempt's line in the
ledger, the integration's health, and an alert when a delivery fails for good.

Every write is ``WHERE id = ... AND claim = ...``: a worker whose claim lapsed (another took
the row since) records nothing. Retry times come from the database's clock.
"""

from __future__ import annotations

import logging
import random
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from core import metrics
from core.infra import dbclock, rawsql
from integrations.delivery import alerts, backends, messages
from integrations.delivery.claim import token_value
from integrations.delivery.transports import Outcome
from integrations.models import TEST, Delivery, DeliveryAttempt, DeliveryState, Health, Integration

logger = logging.getLogger(__name__)

COUNTDOWN_LIMIT_SECONDS = 60  # longer waits are left to the sweeper, not to broker ETAs
# An attempt that takes half its 10 s deadline or more puts its destination in the slow lane
# (claim.py) for a while; each slow attempt there renews it, a quick one ends it.
SLOW_ATTEMPT_MS = 5_000
SLOW_LANE_FOR = timedelta(minutes=10)

# One attempt: the delivery, what happened, when it started (database clock), how long it took.
Result = tuple[Delivery, Outcome, datetime, int]


def record_success(delivery: Delivery, outcome: Outcome, started: datetime,
                   duration_ms: int) -> bool:
    """Record a delivered attempt the moment it ends, in one statement whose text never
    changes (backends.success_writer): the row's new state and its line in the ledger
    together, fenced by the claim. A worker that dies after it sends nothing again. True if
    the claim still held the row (else nothing is written)."""
    adapt = connection.ops.adapt_datetimefield_value
    finished_at = dbclock.now()
    held = backends.success_writer()([
        adapt(finished_at), rawsql.db_id(Delivery, delivery.pk), token_value(delivery.claim),
        adapt(started), duration_ms, outcome.status_code,
    ])
    if not held:
        logger.warning("Delivery %s: the claim lapsed; the attempt is not recorded",
                       delivery.pk)
        return False
    delivery.state, delivery.last_error = DeliveryState.DELIVERED, None
    delivery.finished_at, delivery.lease_until = finished_at, None
    metrics.delivery(delivery.integration.type, "delivered")
    return True


def record_successes(results: list[Result]) -> None:
    """Record delivered attempts, each as its own statement, then their integrations' health."""
    update_health([row for row in results if record_success(*row)])


def update_health(results: list[Result]) -> None:
    """The health of the integrations of recorded successes, each by its latest attempt.

    Each integration is updated in a statement of its own, after the deliveries are recorded
    and in a fixed order: two workers recording batches that share integrations must never
    hold one integration's row while waiting for another's.
    """
    latest: dict = {}
    for delivery, outcome, started, duration_ms in results:
        integration = delivery.integration
        if integration.pk not in latest or latest[integration.pk][2] < started:
            latest[integration.pk] = (integration, outcome, started, duration_ms)
    for key in sorted(latest):
        update_integration(*latest[key])


@transaction.atomic
def record_attempt(
    delivery: Delivery, outcome: Outcome, started: datetime, duration_ms: int
) -> Delivery:
    """Record one attempt, fenced by the delivery's claim: the row's new state first, and
    the attempt, the integration's health and any alert only if this claim still holds it."""
    is_test = delivery.event_type == TEST
    delay = (
        None
        if (outcome.ok or outcome.permanent or is_test)
        else retry_delay(delivery.attempts, outcome.retry_after)
    )
    if outcome.ok:
        held = _fenced(delivery, state=DeliveryState.DELIVERED, last_error=None,
                       finished_at=dbclock.now(), lease_until=None)
    elif delay is None:
        held = _fenced(delivery, state=DeliveryState.FAILED, last_error=_short(outcome.error),
                       finished_at=dbclock.now(), lease_until=None)
    else:
        due = dbclock.now() + timedelta(seconds=delay)
        # A short wait is queued with a countdown right away; a long one waits for the sweeper.
        held = _fenced(delivery, state=DeliveryState.PENDING, last_error=_short(outcome.error),
                       next_attempt_at=due,
                       queued_at=due if delay <= COUNTDOWN_LIMIT_SECONDS else None,
                       lease_until=None)
    if not held:
        return delivery
    metrics.delivery(delivery.integration.type, counted_as(outcome, delay))
    DeliveryAttempt.objects.create(
        delivery=delivery,
        number=delivery.attempts,
        started_at=started,
        duration_ms=duration_ms,
        succeeded=outcome.ok,
        status_code=outcome.status_code,
        error=_short(outcome.error),
    )
    update_integration(delivery.integration, outcome, started, duration_ms)
    if delivery.state == DeliveryState.FAILED and not is_test:
        alerts.failed_for_good(
            delivery.integration, form_name=_form_name(delivery),
            error=_short(outcome.error), disabled=outcome.disable,
        )
    return delivery


def counted_as(outcome: Outcome, delay: float | None) -> str:
    """The attempt's outcome in formflow_deliveries_total. A notification held for the
    owner's digest is on time, not failing: counted as failed, it would set off every
    failure-rate alert on ordinary traffic."""
    if outcome.ok:
        return "delivered"
    if delay is None:
        return "failed"
    return "held" if outcome.held else "retrying"


def finish(delivery: Delivery, state: str, error: str | None) -> Delivery:
    """End a delivery without an attempt (its integration was disabled)."""
    if _fenced(delivery, state=state, last_error=error, finished_at=dbclock.now(),
               lease_until=None):
        metrics.delivery(delivery.integration.type, state)
    return delivery


def _fenced(delivery: Delivery, **changes: Any) -> bool:
    """Write ``changes`` to the delivery if its claim is still this one's; whether it was.
    A claim that lapsed (another worker took the row since) records nothing."""
    # In progress too: written again after a lost connection (attempt.on_a_live_connection),
    # a write that had landed matches nothing.
    written = Delivery.objects.filter(pk=delivery.pk, claim=delivery.claim,
                                      state=DeliveryState.IN_PROGRESS).update(**changes)
    if not written:
        logger.warning("Delivery %s: the claim lapsed; the attempt is not recorded",
                       delivery.pk)
        return False
    for name, value in changes.items():
        setattr(delivery, name, value)
    return True


def retry_delay(attempts: int, retry_after: float | None) -> float | None:
    """Seconds until the next attempt, or None when every attempt is spent."""
    delays = settings.DELIVERY_RETRY_DELAYS
    if attempts > len(delays):
        return None
    delay = delays[attempts - 1] * (1 + random.uniform(0, 0.1))
    return max(delay, retry_after or 0)


def retry_soon(delivery: Delivery) -> None:
    """A delivery that waits a short while for its next attempt is sent a message with a
    countdown, not left to the sweeper."""
    if delivery.state != DeliveryState.PENDING:
        return
    wait = (delivery.next_attempt_at - dbclock.now()).total_seconds()
    if wait <= COUNTDOWN_LIMIT_SECONDS:
        retry_later(delivery.pk, max(wait, 0))


def retry_later(delivery_id, countdown: float) -> None:
    if not messages.deliver_later(delivery_id, countdown):
        Delivery.objects.filter(pk=delivery_id).update(queued_at=None)


def is_slow(duration_ms: int) -> bool:
    return duration_ms >= SLOW_ATTEMPT_MS


def update_integration(integration: Integration, outcome: Outcome, at,
                       duration_ms: int = 0) -> None:
    """Health follows the latest attempt by start time, so a slow older attempt that
    finishes last cannot overwrite it; so does the slow lane (a slow attempt puts the
    destination in it for SLOW_LANE_FOR, a quick one takes it out). Other changes (410, new
    tokens) always apply."""
    adapt = connection.ops.adapt_datetimefield_value
    at_value = adapt(at)
    slow_until = adapt(dbclock.now() + SLOW_LANE_FOR) if is_slow(duration_ms) else None
    rawsql.execute(
        f"UPDATE {rawsql.table(Integration)} SET status = %s, last_run_at = %s, last_error = %s, "
        "slow_until = %s WHERE id = %s AND (last_run_at IS NULL OR last_run_at <= %s)",
        [
            Health.HEALTHY if outcome.ok else Health.FAILING,
            at_value,
            None if outcome.ok else _short(outcome.error),
            slow_until,
            rawsql.db_id(Integration, integration.pk),
            at_value,
        ],
    )
    changes: dict[str, Any] = {}
    if outcome.disable:
        changes["enabled"] = False
        if integration.hook:  # a subscription whose target is gone ends (contract)
            transaction.on_commit(lambda: Integration.objects.filter(pk=integration.pk).delete())
    if outcome.secrets is not None:
        integration.set_secrets({**integration.secrets, **outcome.secrets})
        changes["secrets_encrypted"] = integration.secrets_encrypted
    if changes:
        Integration.objects.filter(pk=integration.pk).update(**changes)


def _form_name(delivery: Delivery) -> str:
    if delivery.payload is not None:  # the event of a change, its submission perhaps gone
        return delivery.payload["data"]["formName"]
    return delivery.submission.form.name if delivery.submission else ""


def _short(error: str | None) -> str | None:
    return error[:500] if error else None
