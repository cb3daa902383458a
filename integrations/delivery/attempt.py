"""One attempt at each delivery of a claim. A single delivery (a test send, a short retry's
message) is a batch of one: the same claim, attempt and record."""

from __future__ import annotations

import logging
import time
from datetime import datetime

from celery.exceptions import SoftTimeLimitExceeded

from core.infra import dbclock
from integrations import events
from integrations.delivery import record, transports
from integrations.delivery.claim import Claim, Lease, claimed_deliveries, deliveries_claim_batch
from integrations.models import TEST, Delivery, DeliveryState

logger = logging.getLogger(__name__)


def delivery_run(delivery_id) -> Delivery | None:
    """Make one attempt at a delivery if it can be claimed; return it as it then stands."""
    claim = deliveries_claim_batch(1, ids=[delivery_id])
    attempted = deliveries_attempt(claim) if claim else []
    return attempted[0] if attempted else None


def deliveries_attempt(claim: Claim) -> list[Delivery]:
    """One attempt at each delivery the claim still holds, each recorded as it ends except
    plain successes, which are recorded together at the end. The deliveries attempted, as
    they then stand."""
    attempted, succeeded = [], []
    lease = Lease(claim)
    for delivery in claimed_deliveries(claim):
        lease.keep()
        if not lease.holds(delivery):
            continue  # re-queued by the sweeper after its lease lapsed: not ours to send
        attempted.append(delivery)
        if _disabled(delivery):
            record.finish(delivery, DeliveryState.FAILED, "Integration is disabled")
            continue
        outcome, started, duration_ms = send(delivery)
        if outcome.ok and outcome.secrets is None:
            succeeded.append((delivery, outcome, started, duration_ms))
        else:
            record.retry_soon(record.record_attempt(delivery, outcome, started, duration_ms))
    if succeeded:
        record.record_successes(succeeded)
    return attempted


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
