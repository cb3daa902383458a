"""Exactly once while workers live (contract, "Exactness under concurrency"): a trickling
receiver or mail relay can neither stretch an attempt past its 10 s deadline nor make a fast
receiver in the same batch get a webhook twice, and a claim that lapsed records nothing.

On both setups, but for what only PostgreSQL gives these tests: worker threads over one
database (the suite's SQLite database is in memory, where a second connection writing at the
same moment fails at once instead of waiting), and a database clock apart from the host's."""

from __future__ import annotations

import collections
import socket
import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.db import connection

from core.infra import dbclock, wallclock
from integrations.clients import http
from integrations.delivery import attempt, claim, messages, record, retry, transports, worker
from integrations.delivery.transports import Outcome
from integrations.models import Delivery, DeliveryAttempt, DeliveryState, Integration
from integrations.services import integration_create
from tests.conftest import add_submission
from tests.fakes import FakeServer, Reply, SlowRelay, Trickle

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def workers_only(settings, monkeypatch):
    """Deliveries wait for the workers these tests run, not for an eager task."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    monkeypatch.setattr(messages, "wake_workers", lambda *args, **kwargs: True)
    monkeypatch.setattr(record, "retry_later", lambda *args: None)


def run_workers(stop: threading.Event, errors: list) -> list[threading.Thread]:
    """Two workers claiming and attempting batches, and the sweeper, until ``stop``."""

    def work() -> None:
        try:
            while not stop.is_set():
                batch = claim.deliveries_claim_batch(worker.BATCH_SIZE)
                if batch:
                    attempt.deliveries_attempt(batch)
                else:
                    time.sleep(0.05)
        except Exception as error:  # reported by the test
            errors.append(error)
        finally:
            connection.close()

    def sweeper() -> None:
        try:
            while not stop.is_set():
                retry.delivery_sweep()
                time.sleep(0.5)
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=target) for target in (work, work, sweeper)]
    for thread in threads:
        thread.start()
    return threads


@pytest.mark.postgres
def test_a_trickling_receiver_beside_a_fast_one_causes_no_duplicate(user, form, allow_private):
    trickle = Trickle()
    with FakeServer(lambda request: Reply(200)) as fast:
        integration_create(owner=user, type="WEBHOOK", config={"url": f"{fast.url}/hook"})
        slow = integration_create(owner=user, type="WEBHOOK", config={"url": trickle.url})
        for n in range(3):
            add_submission(form, {"n": str(n)})
        errors = work_until_attempted(slow, time.monotonic())
        trickle.shutdown()
        trickle.server_close()

    assert errors == []
    ids = collections.Counter(request.headers["webhook-id"] for request in fast.requests)
    assert len(ids) == 3 and set(ids.values()) == {1}  # each webhook-id exactly once
    slow_attempts = DeliveryAttempt.objects.filter(delivery__integration=slow)
    assert {attempt.succeeded for attempt in slow_attempts} == {False}
    assert max(attempt.duration_ms for attempt in slow_attempts) < 10_600  # its deadline
    assert {attempt.error for attempt in slow_attempts} == {"Timed out after 10 s"}
    assert Delivery.objects.filter(integration=slow, state=DeliveryState.DELIVERED).count() == 0


def work_until_attempted(integration, began: float) -> list:
    """Two workers and the sweeper run until ``integration`` has an attempt recorded (at most
    30 s), and one second more: what a second worker or the sweeper would do next, it does."""
    stop, errors = threading.Event(), []
    threads = run_workers(stop, errors)
    try:
        while not DeliveryAttempt.objects.filter(delivery__integration=integration).exists():
            assert time.monotonic() - began < 30, ("the slow attempt never ended", errors, list(
                Delivery.objects.values_list("state", "attempts", "lease_until", "last_error")))
            time.sleep(0.1)
        time.sleep(1)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return errors


@pytest.fixture
def slow_relay(settings):
    relay = SlowRelay("data")
    settings.EMAIL_BACKEND = "accounts.smtp.BoundedEmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", relay.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 10
    settings.DELIVERY_RETRY_DELAYS = [300]
    yield relay
    relay.close()


@pytest.mark.postgres
def test_a_trickling_mail_relay_sends_no_second_email(user, allow_private, slow_relay):
    """The owner's notification goes to a relay that takes the message and then answers a
    byte every 1.5 s: the attempt ends at its 10 s deadline and is retried later, the lease
    never lapses under it, so no second worker sends the email again meanwhile, and the fast
    webhook in the same batch is sent once."""
    from forms_app.services import form_create

    mailed = form_create(owner=user, name="Mailed", notify_owner=True)
    owner_email = Integration.objects.get(form=mailed, type="OWNER_EMAIL")
    with FakeServer(lambda request: Reply(200)) as fast:
        integration_create(owner=user, type="WEBHOOK", config={"url": f"{fast.url}/hook"})
        add_submission(mailed, {"n": "1"})
        errors = work_until_attempted(owner_email, time.monotonic())

    assert errors == []
    assert slow_relay.messages == 1
    assert len(fast.requests) == 1
    [attempt] = DeliveryAttempt.objects.filter(delivery__integration=owner_email)
    assert not attempt.succeeded and attempt.duration_ms < 10_600
    assert attempt.error == "Email not sent: TimeoutError: Timed out after 10 s"
    delivery = Delivery.objects.get(integration=owner_email)
    assert delivery.state == DeliveryState.PENDING and delivery.attempts == 1


@pytest.mark.parametrize("destination", ["webhook", "owner email"])
def test_a_trickling_destination_ends_the_attempt_at_its_deadline(user, allow_private,
                                                                 slow_relay, destination):
    """One worker, one attempt: it ends at its 10 s deadline (half the lease), is recorded as
    a retry, and a second claim finds nothing to send."""
    from forms_app.services import form_create

    trickle = Trickle()
    mailed = form_create(owner=user, name="Mailed", notify_owner=destination == "owner email")
    if destination == "webhook":
        integration_create(owner=user, type="WEBHOOK", config={"url": trickle.url})
    add_submission(mailed, {"n": "1"})
    batch = claim.deliveries_claim_batch(10)
    began = time.monotonic()

    attempt.deliveries_attempt(batch)

    assert time.monotonic() - began < 10.6
    trickle.shutdown()
    trickle.server_close()
    delivery = Delivery.objects.get()
    assert delivery.state == DeliveryState.PENDING and "Timed out after 10 s" in delivery.last_error
    assert not claim.deliveries_claim_batch(10)  # nothing for a second worker to send
    assert trickle.served + slow_relay.messages == 1


def test_the_watchdog_is_woken_only_by_a_nearer_deadline(monkeypatch):
    """Calls share one bound: the watchdog sleeps until the nearest deadline, and a call that
    ends later does not wake it. One that ends sooner does, and is cut in time."""
    from core.infra import wallclock

    dog = wallclock._Watchdog()
    wakes = []
    notify = dog.wake.notify
    monkeypatch.setattr(dog.wake, "notify", lambda *args: (wakes.append(1), notify(*args)))
    now = time.monotonic()
    first = dog.watch(now + 10)
    later = [dog.watch(now + 10 + n / 100) for n in range(1, 101)]
    assert len(wakes) == 1

    sooner = dog.watch(now + 0.2)

    assert len(wakes) == 2
    assert sooner.cut.wait(timeout=2)
    assert not first.cut.is_set() and not any(entry.cut.is_set() for entry in later)
    for entry in [first, *later]:
        entry.done = True


def test_dns_that_never_answers_ends_the_attempt_at_its_deadline(monkeypatch):
    never = threading.Event()

    def unanswered(*args, **kwargs):
        never.wait(30)
        raise socket.gaierror("no answer")

    monkeypatch.setattr(http, "getaddrinfo", unanswered)
    began = time.monotonic()
    with wallclock.deadline(2):
        result = http.post("https://hooks.example.com/x", data=b"{}", headers={})
    never.set()

    assert time.monotonic() - began < 2.5
    assert not result.ok and result.status_code is None


def test_a_lapsed_claim_records_nothing(user, form):
    integration_create(owner=user, type="WEBHOOK", config={"url": "https://hooks.example.com/"})
    add_submission(form, {"n": "1"})
    first = claim.deliveries_claim_batch(10)
    Delivery.objects.update(lease_until="2000-01-01T00:00:00Z")  # its worker stalled
    second = claim.deliveries_claim_batch(10)
    assert list(first) == list(second) and first.token != second.token

    [stale] = claim.claimed_deliveries(first)
    record.record_successes([(stale, Outcome(True, 200), dbclock.now(), 5)])
    record.record_attempt(stale, Outcome(False, error="HTTP 500"), dbclock.now(), 5)

    delivery = Delivery.objects.get()
    assert delivery.state == DeliveryState.IN_PROGRESS and delivery.claim == second.token
    assert not DeliveryAttempt.objects.exists()
    [current] = claim.claimed_deliveries(second)
    record.record_successes([(current, Outcome(True, 200), dbclock.now(), 5)])
    assert Delivery.objects.get().state == DeliveryState.DELIVERED
    assert DeliveryAttempt.objects.count() == 1
    assert uuid.UUID(str(Delivery.objects.get().claim)) == second.token


@pytest.mark.postgres
def test_lease_times_come_from_the_database_clock(user, form, monkeypatch):
    from django.utils import timezone

    from core import clock

    real_now = timezone.now
    monkeypatch.setattr(clock, "now", lambda: real_now() + timedelta(seconds=40))  # host ahead
    monkeypatch.setattr(timezone, "now", lambda: real_now() + timedelta(seconds=40))
    dbclock.forget()
    try:
        integration_create(owner=user, type="WEBHOOK",
                           config={"url": "https://hooks.example.com/"})
        add_submission(form, {"n": "1"})
        assert claim.deliveries_claim_batch(10)
        with connection.cursor() as cursor:
            cursor.execute("SELECT now()")
            (database_now,) = cursor.fetchone()
    finally:
        dbclock.forget()

    lease_until = Delivery.objects.get().lease_until
    assert abs(lease_until - (database_now + claim.LEASE)) < timedelta(seconds=2)


@pytest.mark.postgres
@pytest.mark.parametrize("host_ahead", [3600, -3600])
def test_retry_times_come_from_the_database_clock(user, form, allow_private, monkeypatch,
                                                 settings, host_ahead):
    """A worker whose clock is an hour ahead (or behind) sets a failed delivery's next attempt
    by the database's clock: the first retry delay (300 s here) after the database's now."""
    from django.utils import timezone

    from core import clock

    settings.DELIVERY_RETRY_DELAYS = [300]
    real_now = timezone.now
    monkeypatch.setattr(clock, "now", lambda: real_now() + timedelta(seconds=host_ahead))
    monkeypatch.setattr(timezone, "now", lambda: real_now() + timedelta(seconds=host_ahead))
    dbclock.forget()
    try:
        with FakeServer(lambda request: Reply(500)) as failing:
            integration_create(owner=user, type="WEBHOOK", config={"url": f"{failing.url}/x"})
            add_submission(form, {"n": "1"})
            attempt.deliveries_attempt(claim.deliveries_claim_batch(10))
        with connection.cursor() as cursor:
            cursor.execute("SELECT now()")
            (database_now,) = cursor.fetchone()
    finally:
        dbclock.forget()

    delivery = Delivery.objects.get()
    assert delivery.state == DeliveryState.PENDING and delivery.last_error == "HTTP 500"
    wait = (delivery.next_attempt_at - database_now).total_seconds()
    assert 300 - 5 < wait < 330 + 5  # the delay and its jitter, from the database's now


def test_a_soft_time_limit_ends_the_batch_and_records_nothing(user, form, monkeypatch):
    from celery.exceptions import SoftTimeLimitExceeded

    def out_of_time(*args):
        raise SoftTimeLimitExceeded()

    integration_create(owner=user, type="WEBHOOK", config={"url": "https://hooks.example.com/"})
    add_submission(form, {"n": "1"})
    monkeypatch.setattr(transports, "deliver", out_of_time)

    with pytest.raises(SoftTimeLimitExceeded):
        attempt.deliveries_attempt(claim.deliveries_claim_batch(10))
    assert Delivery.objects.get().state == DeliveryState.IN_PROGRESS  # the lease hands it on
    assert not DeliveryAttempt.objects.exists()


def test_a_row_whose_lease_lapsed_mid_batch_is_not_sent_by_the_old_claim(user, form,
                                                                          monkeypatch):
    """A long attempt let the batch's lease lapse; the sweeper's re-queue gave the second row to
    another worker. The first worker's next renewal finds it no longer holds that row, and
    leaves it alone."""
    sent = []
    monkeypatch.setattr(attempt, "send",
                        lambda delivery: (sent.append(delivery.pk) or Outcome(True, 200),
                                          dbclock.now(), 5))
    integration_create(owner=user, type="WEBHOOK", config={"url": "https://hooks.example.com/"})
    add_submission(form, {"n": "1"})
    add_submission(form, {"n": "2"})
    first = claim.deliveries_claim_batch(10)
    Delivery.objects.update(lease_until="2000-01-01T00:00:00Z")
    second = claim.deliveries_claim_batch(10)  # another worker now holds both rows
    assert first.token != second.token
    monkeypatch.setattr(claim, "RENEW_BEFORE", claim.LEASE)  # renew at once

    attempt.deliveries_attempt(first)

    assert sent == []
    assert set(Delivery.objects.values_list("state", flat=True)) == {DeliveryState.IN_PROGRESS}
