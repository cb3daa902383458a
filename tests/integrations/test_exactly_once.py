"""Exactly once while workers live (contract, "Exactness under concurrency"): a trickling
receiver can neither stretch an attempt past its 10 s deadline nor make a fast receiver in the
same batch get a webhook twice, and a claim that lapsed records nothing."""

from __future__ import annotations

import collections
import socket
import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.db import connection

from core.infra import dbclock
from integrations import outbox
from integrations.clients import http
from integrations.models import Delivery, DeliveryAttempt, DeliveryState
from integrations.services import integration_create
from integrations.transports import Outcome
from tests.conftest import add_submission
from tests.fakes import FakeServer, Reply, Trickle

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def workers_only(settings, monkeypatch):
    """Deliveries wait for the workers these tests run, not for an eager task."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    monkeypatch.setattr(outbox, "_wake_workers", lambda *args, **kwargs: True)
    monkeypatch.setattr(outbox, "delivery_retry_later", lambda *args: None)


def run_workers(stop: threading.Event, errors: list) -> list[threading.Thread]:
    """Two workers claiming and attempting batches, and the sweeper, until ``stop``."""

    def worker() -> None:
        try:
            while not stop.is_set():
                claim = outbox.deliveries_claim_batch(outbox.BATCH_SIZE)
                if claim:
                    outbox.deliveries_attempt(claim)
                else:
                    time.sleep(0.05)
        except Exception as error:  # reported by the test
            errors.append(error)
        finally:
            connection.close()

    def sweeper() -> None:
        try:
            while not stop.is_set():
                outbox.delivery_sweep()
                time.sleep(0.5)
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=target) for target in (worker, worker, sweeper)]
    for thread in threads:
        thread.start()
    return threads


def test_a_trickling_receiver_beside_a_fast_one_causes_no_duplicate(user, form, allow_private):
    trickle = Trickle()
    with FakeServer(lambda request: Reply(200)) as fast:
        integration_create(owner=user, type="WEBHOOK", config={"url": f"{fast.url}/hook"})
        slow = integration_create(owner=user, type="WEBHOOK", config={"url": trickle.url})
        for n in range(3):
            add_submission(form, {"n": str(n)})
        stop, errors = threading.Event(), []
        began = time.monotonic()
        threads = run_workers(stop, errors)
        try:
            while not DeliveryAttempt.objects.filter(delivery__integration=slow).exists():
                assert time.monotonic() - began < 30, "the slow attempt never ended"
                time.sleep(0.1)
            time.sleep(1)  # what a second worker or the sweeper would do next, it does now
        finally:
            stop.set()
            for thread in threads:
                thread.join()
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


def test_dns_that_never_answers_ends_the_attempt_at_its_deadline(monkeypatch):
    never = threading.Event()

    def unanswered(*args, **kwargs):
        never.wait(30)
        raise socket.gaierror("no answer")

    monkeypatch.setattr(http, "getaddrinfo", unanswered)
    began = time.monotonic()
    with http.deadline(2):
        result = http.post("https://hooks.example.com/x", data=b"{}", headers={})
    never.set()

    assert time.monotonic() - began < 2.5
    assert not result.ok and result.status_code is None


def test_a_lapsed_claim_records_nothing(user, form):
    integration_create(owner=user, type="WEBHOOK", config={"url": "https://hooks.example.com/"})
    add_submission(form, {"n": "1"})
    first = outbox.deliveries_claim_batch(10)
    Delivery.objects.update(lease_until="2000-01-01T00:00:00Z")  # its worker stalled
    second = outbox.deliveries_claim_batch(10)
    assert list(first) == list(second) and first.token != second.token

    [stale] = outbox.claimed_deliveries(first)
    outbox._record_successes([(stale, Outcome(True, 200), dbclock.now(), 5)])
    outbox._record(stale, Outcome(False, error="HTTP 500"), dbclock.now(), 5)

    delivery = Delivery.objects.get()
    assert delivery.state == DeliveryState.IN_PROGRESS and delivery.claim == second.token
    assert not DeliveryAttempt.objects.exists()
    [current] = outbox.claimed_deliveries(second)
    outbox._record_successes([(current, Outcome(True, 200), dbclock.now(), 5)])
    assert Delivery.objects.get().state == DeliveryState.DELIVERED
    assert DeliveryAttempt.objects.count() == 1
    assert uuid.UUID(str(Delivery.objects.get().claim)) == second.token


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
        assert outbox.deliveries_claim_batch(10)
        with connection.cursor() as cursor:
            cursor.execute("SELECT now()")
            (database_now,) = cursor.fetchone()
    finally:
        dbclock.forget()

    lease_until = Delivery.objects.get().lease_until
    assert abs(lease_until - (database_now + outbox.BATCH_LEASE)) < timedelta(seconds=2)


def test_a_soft_time_limit_ends_the_batch_and_records_nothing(user, form, monkeypatch):
    from celery.exceptions import SoftTimeLimitExceeded

    def out_of_time(*args):
        raise SoftTimeLimitExceeded()

    integration_create(owner=user, type="WEBHOOK", config={"url": "https://hooks.example.com/"})
    add_submission(form, {"n": "1"})
    monkeypatch.setattr(outbox.transports, "deliver", out_of_time)

    with pytest.raises(SoftTimeLimitExceeded):
        outbox.deliveries_attempt(outbox.deliveries_claim_batch(10))
    assert Delivery.objects.get().state == DeliveryState.IN_PROGRESS  # the lease hands it on
    assert not DeliveryAttempt.objects.exists()


def test_a_row_whose_lease_lapsed_mid_batch_is_not_sent_by_the_old_claim(user, form,
                                                                          monkeypatch):
    """A long attempt let the batch's lease lapse; the sweeper's re-queue gave the second row to
    another worker. The first worker's next renewal finds it no longer holds that row, and
    leaves it alone."""
    sent = []
    monkeypatch.setattr(outbox, "_attempt",
                        lambda delivery: (sent.append(delivery.pk) or Outcome(True, 200),
                                          dbclock.now(), 5))
    integration_create(owner=user, type="WEBHOOK", config={"url": "https://hooks.example.com/"})
    add_submission(form, {"n": "1"})
    add_submission(form, {"n": "2"})
    first = outbox.deliveries_claim_batch(10)
    Delivery.objects.update(lease_until="2000-01-01T00:00:00Z")
    second = outbox.deliveries_claim_batch(10)  # another worker now holds both rows
    assert first.token != second.token
    monkeypatch.setattr(outbox, "RENEW_BEFORE", outbox.BATCH_LEASE)  # renew at once

    outbox.deliveries_attempt(first)

    assert sent == []
    assert set(Delivery.objects.values_list("state", flat=True)) == {DeliveryState.IN_PROGRESS}
