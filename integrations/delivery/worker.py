"""A worker's loop over due deliveries (one ``deliver_due`` message): claim a batch, attempt
it, and on until none is left; then linger a moment for more, holding the deliveries-due flag
up (integrations/delivery/nudge.py)."""

from __future__ import annotations

import time

from django.conf import settings

from core.infra import dbclock
from integrations.delivery import claim, messages, nudge
from integrations.delivery.attempt import deliveries_attempt
from integrations.models import Delivery, DeliveryState

# Up to 25 a claim: under load a worker finds a backlog after each batch, and every batch costs
# the same six statements however full it is (from 10: 0.65 to 0.61 ms of worker CPU a
# delivery). Larger, and one slow receiver would hold more deliveries behind it.
BATCH_SIZE = 25
RUN_DUE_BUDGET_SECONDS = 20.0  # then the task hands over, well inside its time limit
LINGER_POLL_SECONDS = 0.02


def deliveries_run_due() -> int:
    """Claim due deliveries in batches and attempt them until none is left, then linger.

    When a whole batch was due, another message asks a second worker to help. After the
    budget the task hands over to a fresh message, so no task nears its time limit.
    """
    began, done, helped = time.monotonic(), 0, False
    idle_since: float | None = None
    renewed = 0.0
    while True:
        now = time.monotonic()
        if now - renewed > nudge.RENEW_EVERY_SECONDS:
            nudge.hold_flag()
            renewed = now
        ids = claim.deliveries_claim_batch(BATCH_SIZE)
        if not ids:
            idle_since = idle_since or now
            if now - idle_since < settings.DELIVERY_LINGER_SECONDS:
                _wait_for_due(idle_since + settings.DELIVERY_LINGER_SECONDS)
                continue
            if _handed_back():
                return done
            renewed, idle_since = 0.0, None  # work came in the grace: on with it
            continue
        idle_since = None
        if len(ids) == BATCH_SIZE and not helped:
            # One helper a run: it loops like this one until nothing is due.
            helped = messages.wake_workers("a helper for a full batch")
        deliveries_attempt(ids)
        done += len(ids)
        if len(ids) < BATCH_SIZE:
            _pace(since=now)
        if time.monotonic() - began > RUN_DUE_BUDGET_SECONDS:
            # Hand over; if the broker is away the rows stay due and the sweeper sends them.
            messages.wake_workers("the rest of the due work")
            return done


def _pace(since: float) -> None:
    """After a batch that was not full, claim again no sooner than the pace after the last
    claim. An eager worker took one or two rows a claim under a steady load, paying a batch's
    statements for each; waiting lets rows gather (at most that long a delay)."""
    wait = since + settings.DELIVERY_BATCH_PACE_SECONDS - time.monotonic()
    if wait > 0:
        time.sleep(wait)


def _wait_for_due(until: float) -> None:
    """Look for due rows every few milliseconds with a read, not a claim: on SQLite a claim
    is a write, and would queue with the web's."""
    while time.monotonic() < until:
        time.sleep(LINGER_POLL_SECONDS)
        if _any_due():
            return


def _handed_back() -> bool:
    """Take the flag down and look once more after the grace: True if nothing came, and
    waking a worker is the next commit's job again."""
    nudge.take_flag()
    grace = nudge.grace()
    if grace:
        time.sleep(grace)
    return not _any_due()


def _any_due() -> bool:
    """Two reads, each a walk of one partial index that stops at its first row."""
    now = dbclock.now()
    return (
        Delivery.objects.filter(state=DeliveryState.PENDING, next_attempt_at__lte=now).exists()
        or Delivery.objects.filter(state=DeliveryState.IN_PROGRESS, lease_until__lt=now).exists()
    )
