"""One attempt at each delivery of a claim. A single delivery (a test send, a short retry's
message) is a batch of one: the same claim, attempt and record."""

from __future__ import annotations

import logging
import time
from datetime import datetime

from celery.exceptions import SoftTimeLimitExceeded

from core.infra import dbclock, stopping
from integrations import events
from integrations.clients.http import DEADLINE_SECONDS
from integrations.delivery import record, transports
from integrations.delivery.claim import (
    ANY,
    Claim,
    Lease,
    claimed_deliveries,
    deliveries_claim_batch,
    deliveries_give_back,
)
from integrations.models import TEST, Delivery, DeliveryState

logger = logging.getLogger(__name__)

ATTEMPT_SECONDS = DEADLINE_SECONDS  # every kind's attempt ends by it (the clients' watchdog)
RECORD_SECONDS = 2.0  # what recording an attempt may take, on a busy database


def delivery_run(delivery_id, *, lane: str = ANY) -> Delivery | None:
    """Make one attempt at a delivery if it can be claimed (in ``lane``); return it as it
    then stands."""
    claim = deliveries_claim_batch(1, ids=[delivery_id], lane=lane)
    attempted = deliveries_attempt(claim) if claim else []
    return attempted[0] if attempted else None


def deliveries_attempt(claim: Claim, *, until: float | None = None) -> list[Delivery]:
    """One attempt at each delivery the claim still holds, each recorded as it ends, so a
    worker that dies sends again only the attempt it had in flight. The deliveries
    attempted, as they then stand.

    What the claim holds but has not started is handed back unattempted when the process is
    told to stop, or when less than an attempt's deadline is left before ``until`` (monotonic
    seconds: the task's time limit), so no batch outlives its task. After a slow attempt, the
    rest of that destination's rows are handed back too: they go by the slow lane.
    """
    attempted: list[Delivery] = []
    succeeded: list[record.Result] = []
    lease = Lease(claim)
    waiting = claimed_deliveries(claim)
    while waiting:
        if not may_start(until):
            deliveries_give_back(claim, [delivery.pk for delivery in waiting])
            break
        delivery = waiting.pop(0)
        lease.keep()
        if not lease.holds(delivery):
            continue  # re-queued by the sweeper after its lease lapsed: not ours to send
        attempted.append(delivery)
        if _disabled(delivery):
            record.finish(delivery, DeliveryState.FAILED, "Integration is disabled")
            continue
        outcome, started, duration_ms = send(delivery)
        if outcome.ok and outcome.secrets is None:
            if record.record_success(delivery, outcome, started, duration_ms):
                succeeded.append((delivery, outcome, started, duration_ms))
        else:
            record.retry_soon(record.record_attempt(delivery, outcome, started, duration_ms))
        if record.is_slow(duration_ms):
            waiting = _slow_ones_given_back(claim, waiting, delivery.integration_id)
    record.update_health(succeeded)
    return attempted


def may_start(until: float | None) -> bool:
    """Whether an attempt may start now: the process is not stopping, and it would end (its
    deadline and its recording) before ``until``."""
    if stopping.requested():
        return False
    return until is None or until - time.monotonic() > ATTEMPT_SECONDS + RECORD_SECONDS


def _slow_ones_given_back(claim: Claim, waiting: list[Delivery], integration_id) -> list:
    """Hands back the waiting rows of a destination whose attempt was just slow; the rest."""
    slow = [delivery.pk for delivery in waiting if delivery.integration_id == integration_id]
    deliveries_give_back(claim, slow)
    return [delivery for delivery in waiting if delivery.integration_id != integration_id]


def _disabled(delivery: Delivery) -> bool:
    return not delivery.integration.enabled and delivery.event_type != TEST


def send(delivery: Delivery) -> tuple[transports.Outcome, datetime, int]:
    """Hand the delivery's event to its integration: what happened, when it started by the
    database's clock, and how long it took. The transport's clients bound it to 10 s."""
    started, began = dbclock.now(), time.monotonic()
    try:
        outcome = transports.deliver(
            delivery.integration, events.event_for(delivery), delivery.message_id
        )
    except SoftTimeLimitExceeded:
        raise  # the task must end now: the lease hands the batch on, nothing is recorded
    except Exception as error:
        # An unexpected failure is recorded like any other, instead of waiting for the lease.
        logger.exception("Delivery %s failed unexpectedly", delivery.pk)
        outcome = transports.Outcome(False, error=f"Internal error: {type(error).__name__}")
    return outcome, started, int((time.monotonic() - began) * 1000)
