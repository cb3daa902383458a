"""A real Celery worker is killed in the middle of a delivery; the delivery still happens."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.db import connection

from forms_app.services import form_create
from integrations.delivery.retry import delivery_sweep
from integrations.models import Delivery
from integrations.services import integration_create
from tests.conftest import CommitClient, make_user, submit
from tests.fakes import FakeServer, Reply
from tests.integrations.conftest import reset_broker_connections

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def start_worker(tmp_path, settings) -> subprocess.Popen:
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
    }
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "--pool",
        "solo",
        "--without-heartbeat",
        "--without-gossip",
        "--without-mingle",
        "--loglevel",
        "INFO",
    ]
    log = (tmp_path / "worker.log").open("ab")
    return subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True,
                            stdout=log, stderr=subprocess.STDOUT)


def stop(worker: subprocess.Popen) -> None:
    """The test is over: a stop lets the worker end its loop, and a busy machine's slow one is
    killed rather than failing a test whose checks have all passed."""
    os.killpg(worker.pid, signal.SIGTERM)
    try:
        worker.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(10)


def wait_for(condition, tmp_path, seconds: float = 60) -> None:
    """Wait for ``condition``; on a timeout, say what the deliveries and the workers did."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    rows = list(Delivery.objects.values("state", "attempts", "next_attempt_at", "lease_until",
                                        "queued_at"))
    log = (tmp_path / "worker.log").read_text(errors="replace")[-4000:]
    raise AssertionError(f"timed out waiting; deliveries: {rows}\nworker log:\n{log}")


def test_worker_killed_mid_delivery_does_not_lose_it(tmp_path, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = settings.REDIS_URL
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2}
    reset_broker_connections()
    release = threading.Event()

    def hold_the_first_request(request):
        if len(receiver.requests) == 1:
            release.wait(20)  # the worker dies while it waits for this answer
        return Reply(200)

    workers = []
    try:
        with FakeServer(hold_the_first_request) as receiver:
            owner = make_user()
            form = form_create(owner=owner, name="Crashy", notify_owner=False)
            integration_create(owner=owner, type="WEBHOOK", config={"url": receiver.url})
            workers.append(start_worker(tmp_path, settings))
            assert submit(CommitClient(), form).status_code == 200
            wait_for(lambda: len(receiver.requests) == 1, tmp_path)
            os.killpg(workers[0].pid, signal.SIGKILL)
            workers[0].wait(10)
            release.set()

            delivery = Delivery.objects.get()
            assert delivery.state == "in_progress"  # claimed by the dead worker
            Delivery.objects.filter(pk=delivery.pk).update(lease_until="2000-01-01T00:00:00Z")
            workers.append(start_worker(tmp_path, settings))
            assert delivery_sweep() == 1

            wait_for(lambda: Delivery.objects.get().state == "delivered", tmp_path)
            assert len(receiver.requests) == 2
            assert Delivery.objects.get().attempts == 2
    finally:
        for worker in workers:
            if worker.poll() is None:
                stop(worker)
        reset_broker_connections()
