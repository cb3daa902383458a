"""Destinations side by side, from the database's side (contract, "Exactness under
concurrency": "Exactly once while workers live"; docs/exactness.md, "Deliveries beside a slow
destination, and what a worker's end repeats").

Each thread of a batch works on a connection of its own and the batch's lease is renewed by
one of them at a time. These tests hold that renewal against a database that makes it wait
(another session's row lock, a busy database), a connection the server ends mid-attempt, and
a thread that cannot get a connection at all."""

from __future__ import annotations

import signal
import threading
import time
from datetime import timedelta

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.db import OperationalError, connection, connections

from integrations.delivery import attempt, claim, transports, worker
from integrations.models import Delivery, DeliveryAttempt, DeliveryState
from tests.conftest import add_submission
from tests.fakes import FakeServer, Reply
from tests.integrations.test_slow_lane import (  # noqa: F401  (workers_only: autouse)
    hooks_to,
    ids_received,
    lapse_every_lease,
    workers_only,
)

pytestmark = [pytest.mark.django_db(transaction=True)]

WAIT = 1.5  # how long the database makes the renewal wait: longer than the tests' lease


@pytest.fixture
def short_lease(monkeypatch):
    """A 1 s lease, renewed before each attempt (the real one: 20 s, renewed with 12 s left)."""
    monkeypatch.setattr(claim, "LEASE", timedelta(seconds=1))
    monkeypatch.setattr(claim, "RENEW_BEFORE", timedelta(seconds=1))


def renewal_waits_once(seconds: float):
    """An execute wrapper: the batch's first lease renewal waits ``seconds`` before it runs,
    as behind SQLite's write lock or on a database too busy to answer."""
    waited = []

    def wrapper(execute, sql, params, many, context):
        if "SET lease_until" in sql and not waited:
            waited.append(sql)
            time.sleep(seconds)
        return execute(sql, params, many, context)

    return wrapper


def in_a_thread(call) -> None:
    """``call()`` as another worker would: a thread, and a connection, of its own."""
    def run() -> None:
        try:
            call()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()


def test_a_renewal_that_outlasts_the_lease_sends_nothing_on_the_lapsed_lease(
        user, form, allow_private, short_lease, monkeypatch):
    """The renewal waits longer than the lease. The lease end it writes was reckoned before
    the wait, so it is already past: another worker claims the row while this one sends it,
    and the receiver gets the same webhook-id twice, no process having died."""
    deliver = transports.deliver
    others: list = []

    def another_worker_looks_first(*args):
        if not others:  # the other worker's own send comes through here too
            others.append(1)
            in_a_thread(lambda: attempt.delivery_run(row.pk))
        return deliver(*args)

    with FakeServer(lambda request: Reply(200)) as receiver:
        hooks_to(user, f"{receiver.url}/hook")
        add_submission(form, {"n": "1"})
        row = Delivery.objects.get()
        batch = claim.deliveries_claim_batch(worker.BATCH_SIZE)
        monkeypatch.setattr(transports, "deliver", another_worker_looks_first)
        with connection.execute_wrapper(renewal_waits_once(WAIT)):
            attempt.deliveries_attempt(batch)

        received = ids_received(receiver)
    assert list(received.values()) == [1]
    assert Delivery.objects.get().state == DeliveryState.DELIVERED
    assert DeliveryAttempt.objects.count() == 1


def test_a_renewal_that_runs_long_starts_no_attempt_past_the_tasks_limit(
        user, form, allow_private, short_lease, monkeypatch):
    """An attempt starts only if it and its recording can end before the task's soft time
    limit. Asked before the renewal, the answer is stale by however long the renewal took:
    the attempt then runs past the limit, where the task is ended and its success lost."""
    monkeypatch.setattr(attempt, "ATTEMPT_SECONDS", 0.5)
    with FakeServer(lambda request: Reply(200)) as receiver:
        hooks_to(user, f"{receiver.url}/hook")
        add_submission(form, {"n": "1"})
        batch = claim.deliveries_claim_batch(worker.BATCH_SIZE)
        # Time for an attempt and its recording now, not after the renewal's wait.
        until = time.monotonic() + attempt.ATTEMPT_SECONDS + attempt.RECORD_SECONDS + 0.5
        with connection.execute_wrapper(renewal_waits_once(WAIT)):
            attempt.deliveries_attempt(batch, until=until)

    assert receiver.requests == []
    assert list(Delivery.objects.values_list("state", "attempts")) == [
        (DeliveryState.PENDING, 0)]  # handed back, for a worker with time left


@pytest.mark.postgres
def test_a_row_locked_elsewhere_past_the_lease_holds_up_no_other_destination(
        user, form, allow_private, short_lease, monkeypatch):
    """Another session holds one delivery row (SELECT ... FOR UPDATE, as deleting its
    submission does) for longer than the lease. The renewal must not wait for it: while it
    waits it holds the batch's lease lock, and every destination's thread waits behind it
    (with the workers' 10 s lock bound, one thread after another; without it, for as long as
    the other session likes), and the lease it then writes was reckoned before the wait.
    Every other row goes out while the lock is held; the locked row is sent once, later, by
    the claim that finds its lease lapsed."""
    monkeypatch.setattr(attempt, "HELP_AFTER_SECONDS", 0.0)
    with FakeServer(lambda request: Reply(200)) as receiver:
        locked_hook, _ = hooks_to(user, f"{receiver.url}/locked", f"{receiver.url}/free")
        for n in range(3):
            add_submission(form, {"n": str(n)})
        locked = Delivery.objects.filter(integration=locked_hook).first()
        batch = claim.deliveries_claim_batch(worker.BATCH_SIZE)
        holder = connections.create_connection("default")
        holder.inc_thread_sharing()  # let go by a timer's thread
        holder.set_autocommit(False)
        with holder.cursor() as cursor:
            cursor.execute("SELECT 1 FROM integrations_delivery WHERE id = %s FOR UPDATE",
                           [locked.pk])
        while_locked: list[str] = []

        def let_go() -> None:
            while_locked.extend(request.path for request in receiver.requests)
            holder.rollback()

        timer = threading.Timer(1 + WAIT, let_go)
        timer.start()
        try:
            attempt.deliveries_attempt(batch)
        finally:
            timer.join()
            holder.close()
        time.sleep(1)  # the locked row's lease lapses
        again = claim.deliveries_claim_batch(worker.BATCH_SIZE)
        if again:
            attempt.deliveries_attempt(again)
        received = ids_received(receiver)

    assert sorted(while_locked) == ["/free"] * 3 + ["/locked"] * 2  # all but the locked row
    assert len(received) == 6 and set(received.values()) == {1}
    assert set(Delivery.objects.values_list("state", flat=True)) == {DeliveryState.DELIVERED}


@pytest.mark.postgres
def test_a_connection_ended_mid_attempt_still_records_the_success(
        user, form, allow_private, monkeypatch):
    """The server ends one thread's connection while its attempt is out (a pooler or server
    restart, an idle timeout, pg_terminate_backend). The receiver has the event: left
    unrecorded, the row's lease would hand it on and it would be sent again, no worker
    having died. The thread records it on a new connection instead."""
    monkeypatch.setattr(attempt, "HELP_AFTER_SECONDS", 0.0)
    deliver = transports.deliver
    ended: list[int] = []

    def connection_ended_while_out(integration, *args):
        if integration.pk == cut.pk and not ended:
            ended.append(connection.connection.info.backend_pid)
            admin = connections.create_connection("default")
            try:
                with admin.cursor() as cursor:
                    cursor.execute("SELECT pg_terminate_backend(%s)", ended)
            finally:
                admin.close()
        return deliver(integration, *args)

    with FakeServer(lambda request: Reply(200)) as receiver:
        cut, _ = hooks_to(user, f"{receiver.url}/cut", f"{receiver.url}/other")
        for n in range(2):
            add_submission(form, {"n": str(n)})
        monkeypatch.setattr(transports, "deliver", connection_ended_while_out)
        attempt.deliveries_attempt(claim.deliveries_claim_batch(worker.BATCH_SIZE))
        lapse_every_lease()  # what the lease would hand on, 20 s later
        again = claim.deliveries_claim_batch(worker.BATCH_SIZE)
        if again:
            attempt.deliveries_attempt(again)
        received = ids_received(receiver)

    assert len(ended) == 1
    assert len(received) == 4 and set(received.values()) == {1}
    assert set(Delivery.objects.values_list("state", flat=True)) == {DeliveryState.DELIVERED}
    assert DeliveryAttempt.objects.count() == 4


def test_a_thread_the_database_refuses_takes_no_destination(
        user, form, allow_private, monkeypatch):
    """The database refuses the helper threads' connections (max_connections reached: each
    pool process may hold DELIVERY_DESTINATIONS_AT_ONCE + 1). A helper that took a
    destination then failed on it: its rows waited for their lease, and the batch raised.
    The threads that have a connection attempt every destination instead."""
    monkeypatch.setattr(attempt, "HELP_AFTER_SECONDS", 0.0)
    wrapper = type(connections["default"])
    connect = wrapper.get_new_connection

    def refused_to_helpers(self, params):
        if threading.current_thread().name == "delivery-destination":
            raise OperationalError("sorry, too many clients already")
        return connect(self, params)

    with FakeServer(lambda request: Reply(200)) as receiver:
        hooks_to(user, *(f"{receiver.url}/hook/{n}" for n in range(3)))
        for n in range(2):
            add_submission(form, {"n": str(n)})
        batch = claim.deliveries_claim_batch(worker.BATCH_SIZE)
        monkeypatch.setattr(wrapper, "get_new_connection", refused_to_helpers)
        attempt.deliveries_attempt(batch)
        received = ids_received(receiver)

    assert len(received) == 6 and set(received.values()) == {1}
    assert set(Delivery.objects.values_list("state", flat=True)) == {DeliveryState.DELIVERED}


def test_a_batch_has_no_more_attempts_in_flight_than_destinations_at_once(
        user, form, allow_private, monkeypatch, settings):
    """A killed worker repeats the attempts it had in flight: for a batch, one a thread, at
    most DELIVERY_DESTINATIONS_AT_ONCE (8) however many destinations it holds (the process's
    slow lane adds its one). Ten receivers hold each request until eight are in."""
    monkeypatch.setattr(attempt, "HELP_AFTER_SECONDS", 0.0)
    cap = settings.DELIVERY_DESTINATIONS_AT_ONCE
    lock, full = threading.Lock(), threading.Event()
    counts = {"now": 0, "peak": 0}

    def held_until_the_cap_is_reached(request):
        with lock:
            counts["now"] += 1
            counts["peak"] = max(counts["peak"], counts["now"])
            if counts["now"] >= cap:
                full.set()
        full.wait(5)
        with lock:
            counts["now"] -= 1
        return Reply(200)

    with FakeServer(held_until_the_cap_is_reached) as receiver:
        hooks_to(user, *(f"{receiver.url}/hook/{n}" for n in range(cap + 2)))
        add_submission(form, {"n": "1"})
        attempt.deliveries_attempt(claim.deliveries_claim_batch(worker.BATCH_SIZE))
        received = ids_received(receiver)

    assert counts["peak"] == cap
    assert len(received) == cap + 2 and set(received.values()) == {1}


class Sleepy:
    """A batch whose destinations each take the seconds they name, each noted as it ends."""

    def __init__(self) -> None:
        self.ended: list[tuple[float, str]] = []

    def attempt_in_order(self, rows: list[float]) -> None:
        time.sleep(rows[0])
        self.ended.append((rows[0], threading.current_thread().name))


def test_the_soft_time_limit_while_joining_waits_for_the_other_threads(monkeypatch):
    """Celery's soft time limit is raised in the batch's own thread, here while it waits for
    a thread still attempting: the batch ends only once that thread has ended (and recorded),
    then the limit goes on up to the task."""
    monkeypatch.setattr(attempt, "HELP_AFTER_SECONDS", 0.05)
    batch = Sleepy()

    def soft_limit(signum, frame):
        raise SoftTimeLimitExceeded()

    previous = signal.signal(signal.SIGALRM, soft_limit)
    signal.setitimer(signal.ITIMER_REAL, 0.9)  # this thread ended its 0.4 s, the other has not
    try:
        began = time.monotonic()
        with pytest.raises(SoftTimeLimitExceeded):
            attempt.side_by_side(batch, [[0.4], [1.5]])
        ended = time.monotonic() - began
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

    # The other thread's attempt ended before the batch did.
    assert batch.ended == [(0.4, "MainThread"), (1.5, "delivery-destination")]
    assert ended >= 1.5
