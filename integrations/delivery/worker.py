"""A worker's loop over due deliveries (one ``deliver_due`` message): claim a batch, attempt
it, and on until none is left; then linger a moment for more, holding the deliveries-due flag
up (integrations/delivery/nudge.py).

Beside the loop, each worker process keeps a slow lane: one thread that attempts, one at a
time, the deliveries of destinations whose attempts keep taking most of their deadline
(claim.SLOW). Their 10 s attempts hold only that thread, so every other destination's
deliveries go on within milliseconds however many wait in the lane, and the lane takes a
bounded share of the worker: one attempt in flight per process.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import connection
from django.db.models import Q

from core.infra import dbclock, stopping
from integrations.delivery import claim, messages, nudge
from integrations.delivery.attempt import (
    ATTEMPT_SECONDS,
    RECORD_SECONDS,
    deliveries_attempt,
    delivery_run,
    may_start,
)
from integrations.models import Delivery, DeliveryState

logger = logging.getLogger(__name__)

# Up to 25 a claim: under load a worker finds a backlog after each batch, and every batch costs
# the same six statements however full it is (from 10: 0.65 to 0.61 ms of worker CPU a
# delivery). A slow destination no longer holds a batch: its rows go by the slow lane.
BATCH_SIZE = 25
RUN_DUE_BUDGET_SECONDS = 20.0  # then the task hands over, well inside its time limit
LINGER_POLL_SECONDS = 0.02
LANE_LOOK_EVERY_SECONDS = 1.0  # how often the loop looks for slow-lane work while it is idle


def deliveries_run_due() -> int:
    """Claim due deliveries in batches and attempt them until none is left, then linger.

    When a whole batch was due, another message asks a second worker to help. After the
    budget the task hands over to a fresh message, and no attempt starts that could end past
    the task's soft time limit. A worker told to stop claims nothing more, hands back what it
    has not started, and ends once its attempt in flight has.
    """
    began, done, helped = time.monotonic(), 0, False
    until = began + settings.CELERY_TASK_SOFT_TIME_LIMIT
    idle_since: float | None = None
    renewed = 0.0
    while True:
        now = time.monotonic()
        if not may_start(until):
            _leave()
            return done
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
        lane.look(now)
        if len(ids) == BATCH_SIZE and not helped:
            # One helper a run: it loops like this one until nothing is due.
            helped = messages.wake_workers("a helper for a full batch")
        deliveries_attempt(ids, until=until)
        done += len(ids)
        if len(ids) < BATCH_SIZE:
            _pace(since=now)
        if time.monotonic() - began > RUN_DUE_BUDGET_SECONDS:
            # Hand over; if the broker is away the rows stay due and the sweeper sends them.
            messages.wake_workers("the rest of the due work")
            return done


def delivery_run_in_lane(delivery_id) -> None:
    """A delivery's next attempt after a short wait (the ``deliver`` message). One whose
    destination is in the slow lane goes to this process's lane instead, so a pool process
    never spends its 10 s on it."""
    if stopping.requested():
        return  # the row stays due: the worker that follows (or the sweeper) takes it
    if delivery_run(delivery_id, lane=claim.NORMAL) is None:
        lane.wake()


def _leave() -> None:
    """Out of time, or told to stop: another worker takes what is due, at once."""
    if stopping.requested():
        nudge.take_flag()  # commits from now on send a message of their own
    if _any_due():
        messages.wake_workers("the due work a worker left")


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
    while time.monotonic() < until and not stopping.requested():
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
    lane.look(time.monotonic(), now=True)
    return not _any_due()


def _due(lane_rows: Q) -> bool:
    """Two reads, each a walk of one partial index that stops at its first row."""
    now = dbclock.now()
    rows = Delivery.objects.filter(lane_rows)
    return (
        rows.filter(state=DeliveryState.PENDING, next_attempt_at__lte=now).exists()
        or rows.filter(state=DeliveryState.IN_PROGRESS, lease_until__lt=now).exists()
    )


def _any_due() -> bool:
    """Whether the normal lane has due rows (the slow lane's are its thread's)."""
    return _due(~Q(integration__slow_until__gt=dbclock.now()))


class SlowLane:
    """This process's slow lane: at most one thread, attempting the lane's deliveries one
    claim of one at a time until none is due, on a database connection of its own. It
    outlives the task that woke it, and the process waits for it before it exits
    (``finish``), so a stop hands back nothing it was sending."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()
        self.looked = -1e9

    def busy(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def look(self, at: float, *, now: bool = False) -> None:
        """From the loop: wake the lane if it is idle and has due work (a read), at most
        once a LANE_LOOK_EVERY_SECONDS unless ``now``."""
        if self.busy() or (not now and at - self.looked < LANE_LOOK_EVERY_SECONDS):
            return
        self.looked = at
        if _due(Q(integration__slow_until__gt=dbclock.now())):
            self.wake()

    def wake(self) -> None:
        with self.lock:
            if self.busy() or stopping.requested():
                return
            self.thread = threading.Thread(target=self._run, name="delivery-slow-lane")
            self.thread.start()

    def _run(self) -> None:
        try:
            while not stopping.requested():
                batch = claim.deliveries_claim_batch(1, lane=claim.SLOW)
                if not batch:
                    return
                deliveries_attempt(batch)
        except Exception:
            # Its row's lease hands it on; the loop wakes the lane again when it looks.
            logger.exception("The slow lane stopped")
        finally:
            connection.close()

    def finish(self, timeout: float = ATTEMPT_SECONDS + RECORD_SECONDS) -> None:
        """Wait for the attempt in flight (it ends by its deadline); the lane claims no more
        once the process is stopping."""
        thread = self.thread
        if thread is not None:
            thread.join(timeout)


lane = SlowLane()
