"""A real Celery worker told to stop (SIGTERM) mid-batch against a slow receiver exits within
WORKER_STOP_SECONDS, and nothing it held is lost (contract, Operations: "Stopping is
graceful")."""

import collections
import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest
from django.db import connection

from forms_app.services import form_create
from integrations.delivery import claim
from integrations.models import Delivery, DeliveryAttempt, DeliveryState
from integrations.services import integration_create
from tests.conftest import add_submission, make_user
from tests.fakes import FakeServer, Reply, Trickle
from tests.integrations.conftest import reset_broker_connections
from tests.integrations.test_worker_crash import ROOT, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]

STOP_SECONDS = 20  # the default


def start_worker(tmp_path, settings) -> subprocess.Popen:
    """The Procfile's worker (prefork, two pool processes), on the test's database."""
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true",
        "DATA_DIR": str(tmp_path),
        "SECRET_KEY": settings.SECRET_KEY,
        "FIELD_ENCRYPTION_KEYS": ",".join(settings.FIELD_ENCRYPTION_KEYS),
        "DELIVERY_RETRY_DELAYS": "300",
        "WORKER_STOP_SECONDS": str(STOP_SECONDS),
        "CELERY_WORKER_NICE": "0",  # the test waits for it: no need to yield
    }
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--concurrency", "2",
               "--without-heartbeat", "--without-gossip", "--without-mingle",
               "--loglevel", "INFO"]
    log = (tmp_path / "worker.log").open("ab")
    return subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True,
                            stdout=log, stderr=subprocess.STDOUT)


def test_a_worker_stopped_mid_batch_exits_in_time_and_hands_back_what_it_held(tmp_path,
                                                                               settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = settings.REDIS_URL
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2}
    reset_broker_connections()
    trickle = Trickle()
    worker = None
    try:
        with FakeServer(lambda request: Reply(200)) as fast:
            owner = make_user()
            form = form_create(owner=owner, name="Stopping", notify_owner=False)
            for url in (trickle.url, f"{fast.url}/hook"):
                integration_create(owner=owner, type="WEBHOOK", config={"url": url})
            worker = start_worker(tmp_path, settings)
            for n in range(8):
                add_submission(form, {"n": str(n)})  # its commit sends the worker a message
            wait_for(lambda: trickle.served >= 1, tmp_path)  # a slow attempt is in flight

            asked = time.monotonic()
            worker.send_signal(signal.SIGTERM)  # the main process, as Docker or systemd does
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.wait(STOP_SECONDS + 10)
            took = time.monotonic() - asked
            received = collections.Counter(r.headers["webhook-id"] for r in fast.requests)
    finally:
        if worker is not None and worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(10)
        trickle.shutdown()
        trickle.server_close()
        reset_broker_connections()

    log = (tmp_path / "worker.log").read_text(errors="replace")
    assert took < STOP_SECONDS, (took, log[-3000:])
    assert "did not stop in time" not in log  # it stopped by itself, not by the last resort
    assert set(received.values()) <= {1}  # no webhook-id twice
    assert not Delivery.objects.filter(state=DeliveryState.IN_PROGRESS).exists()
    for delivery in Delivery.objects.all():  # every attempt it counted, it recorded
        assert delivery.attempts == DeliveryAttempt.objects.filter(delivery=delivery).count()
    handed_back = set(Delivery.objects.filter(state=DeliveryState.PENDING, attempts=0)
                      .values_list("pk", flat=True))
    assert handed_back <= set(claim.deliveries_claim_batch(100, lane=claim.ANY))  # at once


def test_a_worker_stopped_while_its_slow_lane_sends_exits_in_time(tmp_path, settings):
    """The trickling destination is already in the slow lane and a pool process's lane
    thread has its 10 s attempt in flight when the stop comes: the worker still exits
    within WORKER_STOP_SECONDS, and sends nothing twice."""
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = settings.REDIS_URL
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2}
    reset_broker_connections()
    trickle = Trickle()
    worker = None
    try:
        with FakeServer(lambda request: Reply(200)) as fast:
            owner = make_user()
            form = form_create(owner=owner, name="Stopping", notify_owner=False)
            for url in (trickle.url, f"{fast.url}/hook"):
                integration_create(owner=owner, type="WEBHOOK", config={"url": url})
            worker = start_worker(tmp_path, settings)
            for n in range(8):
                add_submission(form, {"n": str(n)})
            wait_for(lambda: trickle.served >= 1, tmp_path)
            served = trickle.served
            # The first slow attempt ends (its destination goes into the slow lane); the
            # lane's thread starts the next one. More submissions keep the loop going.
            deadline = time.monotonic() + 30
            while trickle.served <= served and time.monotonic() < deadline:
                add_submission(form, {"n": "more"})
                time.sleep(0.2)
            assert trickle.served > served, (tmp_path / "worker.log").read_text()[-3000:]
            time.sleep(1)

            asked = time.monotonic()
            worker.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.wait(STOP_SECONDS + 15)
            took = time.monotonic() - asked
            received = collections.Counter(r.headers["webhook-id"] for r in fast.requests)
    finally:
        if worker is not None and worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(10)
        trickle.shutdown()
        trickle.server_close()
        reset_broker_connections()

    log = (tmp_path / "worker.log").read_text(errors="replace")
    assert took < STOP_SECONDS, (took, log[-3000:])
    assert set(received.values()) <= {1}
