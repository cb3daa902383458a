"""One attempt at each delivery of a claim. A single delivery (a test send, a short retry's
message) is a batch of one: the same claim, attempt and record."""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, connections

from core.infra import dbclock, stopping
from integrations import events
from integrations.clients.http import DEADLINE_SECONDS
from integrations.delivery import backends, record, transports
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
# Quick attempts take milliseconds: a batch's destinations still waiting after this have met
# a slow one, and get threads of their own.
HELP_AFTER_SECONDS = 0.2


def delivery_run(delivery_id, *, lane: str = ANY) -> Delivery | None:
    """Make one attempt at a delivery if it can be claimed (in ``lane``); return it as it
    then stands."""
    claim = deliveries_claim_batch(1, ids=[delivery_id], lane=lane)
    attempted = deliveries_attempt(claim) if claim else []
    return attempted[0] if attempted else None


def deliveries_attempt(claim: Claim, *, until: float | None = None) -> list[Delivery]:
    """One attempt at each delivery the claim still holds, each recorded as it ends, so a
    worker that dies sends again only the attempts it had in flight. The deliveries
    attempted, as they then stand.

    Each destination's rows go in order, and destinations go side by side (``side_by_side``),
    so one whose attempt takes its whole deadline holds up only its own rows. What the claim
    holds but has not started is handed back unattempted when the process is told to stop,
    or when less than an attempt's deadline is left before ``until`` (monotonic seconds: the
    task's time limit), so no batch outlives its task. After a slow attempt, the rest of that
    destination's rows are handed back too: they go by the slow lane.
    """
    batch = Batch(claim, until)
    destinations = by_destination(claimed_deliveries(claim))
    if len(destinations) > 1 and not connection.in_atomic_block:
        side_by_side(batch, destinations)
    else:
        # Inside a caller's transaction no other connection sees the claim: one at a time.
        for rows in destinations:
            batch.attempt_in_order(rows)
    with backends.database_turn():
        record.update_health(batch.succeeded)
    return batch.attempted


def by_destination(deliveries: list[Delivery]) -> list[list[Delivery]]:
    """The batch's rows grouped by integration, each group in the batch's order."""
    groups: dict = {}
    for delivery in deliveries:
        groups.setdefault(delivery.integration_id, []).append(delivery)
    return list(groups.values())


def side_by_side(batch: Batch, destinations: list[list[Delivery]]) -> None:
    """Attempt each destination's rows on one of up to DELIVERY_DESTINATIONS_AT_ONCE threads,
    each taking the next destination as it is free. This thread starts at once; the others
    join in only if destinations are still waiting after HELP_AFTER_SECONDS, so a batch of
    quick attempts opens no connection more. A thread of its own has a database connection
    of its own, closed as it ends. An error in one thread leaves its destination's rows to
    the lease, lets the others finish, and is raised here."""
    waiting = collections.deque(destinations)
    drained = threading.Event()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            while True:
                try:
                    rows = waiting.popleft()
                except IndexError:
                    drained.set()
                    return
                batch.attempt_in_order(rows)
        except BaseException as error:  # raised in the batch's own thread, below
            errors.append(error)

    def help_if_needed(done: threading.Event) -> None:
        try:
            if not drained.wait(HELP_AFTER_SECONDS) and waiting and connected():
                work()
        finally:
            connections.close_all()
            done.set()

    count = min(settings.DELIVERY_DESTINATIONS_AT_ONCE, len(destinations)) - 1
    ended = [threading.Event() for _ in range(count)]
    for done in ended:
        threading.Thread(target=help_if_needed, args=(done,),
                         name="delivery-destination").start()
    work()
    wait_for_all(ended)
    if errors:
        raise errors[0]


def wait_for_all(ended: list[threading.Event]) -> None:
    """Wait until every thread has ended, through the task's soft time limit too: a thread
    still attempting or recording goes on to its end (may_start's deadline bounds it), and
    until then the task must not end, nor its process start another batch. The limit is
    raised once all have ended. Events, not Thread.join: on CPython 3.11 a join that a signal
    handler's exception interrupts marks the thread ended while it still runs (bpo-45274), so
    joining it again returns at once."""
    limited: SoftTimeLimitExceeded | None = None
    waiting = collections.deque(ended)
    while waiting:
        try:
            waiting[0].wait()
        except SoftTimeLimitExceeded as error:
            limited = error
        else:
            waiting.popleft()
    if limited is not None:
        raise limited


def connected() -> bool:
    """Whether this thread has a database connection. A thread the database refuses
    (max_connections reached) takes no destination: it would fail on it, and its rows would
    wait for their lease, while the threads that have a connection can attempt them."""
    try:
        connection.ensure_connection()
    except DatabaseError as error:
        logger.warning("A delivery thread got no database connection: %s", error)
        return False
    return True


class Batch:
    """What the threads attempting one claim share: its lease (renewed by one at a time),
    its deadline, and what was attempted and what succeeded (lists: appending is atomic)."""

    def __init__(self, claim: Claim, until: float | None) -> None:
        self.claim, self.until = claim, until
        self.lease = Lease(claim)
        self.lease_lock = threading.Lock()
        self.attempted: list[Delivery] = []
        self.succeeded: list[record.Result] = []

    def attempt_in_order(self, rows: list[Delivery]) -> None:
        """One destination's rows, one after another."""
        for index, delivery in enumerate(rows):
            if not self.holds(delivery):
                continue  # re-queued by the sweeper after its lease lapsed: not ours to send
            # Asked after the renewal, which may have waited on the database.
            if not may_start(self.until):
                self.give_back(rows[index:])
                return
            if record.is_slow(self.attempt(delivery)):
                self.give_back(rows[index + 1:])  # they go by the slow lane
                return

    def holds(self, delivery: Delivery) -> bool:
        """Whether the claim still holds the row, its lease renewed first if it runs short."""
        with self.lease_lock, backends.database_turn():
            self.lease.keep()
            return self.lease.holds(delivery)

    def attempt(self, delivery: Delivery) -> int:
        """One attempt, recorded the moment it ends; how long it took (ms)."""
        self.attempted.append(delivery)
        if _disabled(delivery):
            with backends.database_turn():
                record.finish(delivery, DeliveryState.FAILED, "Integration is disabled")
            return 0
        outcome, started, duration_ms = send(delivery)
        on_a_live_connection(lambda: self.record(delivery, outcome, started, duration_ms))
        return duration_ms

    def record(self, delivery: Delivery, outcome: transports.Outcome, started: datetime,
               duration_ms: int) -> None:
        with backends.database_turn():
            if outcome.ok and outcome.secrets is None:
                if record.record_success(delivery, outcome, started, duration_ms):
                    self.succeeded.append((delivery, outcome, started, duration_ms))
            else:
                record.retry_soon(record.record_attempt(delivery, outcome, started, duration_ms))

    def give_back(self, rows: list[Delivery]) -> None:
        with backends.database_turn():
            deliveries_give_back(self.claim, [delivery.pk for delivery in rows])


def on_a_live_connection(write: Callable[[], None]) -> None:
    """``write()``, once more on a new connection if the server ended this thread's while
    the attempt was out (a restart, an idle timeout, pg_terminate_backend): the attempt has
    been made, and left unrecorded its lease would hand it on to be sent again. The writes
    are fenced by the claim and the row's state, so one that had landed before the
    connection went records nothing the second time."""
    try:
        write()
    except (OperationalError, InterfaceError):
        if connection.connection is not None and connection.is_usable():
            raise  # the database refused the write itself: not a lost connection
        connection.close()
        write()


def may_start(until: float | None) -> bool:
    """Whether an attempt may start now: the process is not stopping, and it would end (its
    deadline and its recording) before ``until``."""
    if stopping.requested():
        return False
    return until is None or until - time.monotonic() > ATTEMPT_SECONDS + RECORD_SECONDS


def _disabled(delivery: Delivery) -> bool:
    return not delivery.integration.enabled and delivery.event_type != TEST


def send(delivery: Delivery) -> tuple[transports.Outcome, datetime, int]:
    """Hand the delivery's event to its integration: what happened, when it started by the
    database's clock, and how long it took. The transport's clients bound it to 10 s."""
    started, began = dbclock.now(), time.monotonic()
    try:
        with backends.database_turn():  # the event may read the database (files, a payload)
            event = events.event_for(delivery)
        outcome = transports.deliver(delivery.integration, event, delivery.message_id)
    except SoftTimeLimitExceeded:
        raise  # the task must end now: the lease hands the batch on, nothing is recorded
    except Exception as error:
        # An unexpected failure is recorded like any other, instead of waiting for the lease.
        logger.exception("Delivery %s failed unexpectedly", delivery.pk)
        outcome = transports.Outcome(False, error=f"Internal error: {type(error).__name__}")
    return outcome, started, int((time.monotonic() - began) * 1000)
