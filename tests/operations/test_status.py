"""/status and ``manage.py status`` (contract, "Operations"): the whole installation for
alerting, each check with its figure; ok, degraded (submissions are taken, something behind
them is down or late) or unavailable (submissions cannot be taken)."""

import json
import time
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.db import OperationalError, connection
from django.utils import timezone
from kombu.asynchronous.timer import Timer

import formflow
from integrations.models import Delivery
from operations import heartbeat, readiness, workers
from operations.models import Heartbeat
from tests.conftest import add_submission, submit

TOKEN = "status-token-0123456789"
CHECKS = {"database", "redis", "broker", "beat", "workers", "deliveries", "mail"}


@pytest.fixture
def token(settings):
    settings.METRICS_TOKEN = TOKEN


@pytest.fixture
def alive(db, token):
    """Beat and one worker have stamped their heartbeats just now."""
    heartbeat.stamp()
    heartbeat.stamp_worker("celery@box")


def installation(client, token=TOKEN):
    response = client.get("/status", HTTP_AUTHORIZATION=f"Bearer {token}")
    return response.status_code, response.json()


def failing(body) -> set[str]:
    return {name for name, check in body["checks"].items() if not check["ok"]}


class RefusedConnection:
    """A mail server that cannot be reached (Django's EMAIL_BACKEND interface)."""

    def __init__(self, **_kwargs):
        pass

    def send_messages(self, _messages):
        raise ConnectionRefusedError(111, "Connection refused by mail.example.net (10.9.8.7)")


def test_without_metrics_token_or_with_another_it_is_a_404(client, db, settings):
    settings.METRICS_TOKEN = None
    assert client.get("/status", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 404
    settings.METRICS_TOKEN = TOKEN
    assert installation(client, "wrong")[0] == 404
    assert client.get("/status").status_code == 404


def test_every_check_passing_is_ok_with_its_figure(client, alive, settings):
    status, body = installation(client)

    assert status == 200
    assert body["status"] == "ok"
    assert body["version"] == formflow.version()
    checks = body["checks"]
    assert set(checks) == CHECKS
    assert checks["database"] == {"ok": True, "unappliedMigrations": 0}
    assert checks["redis"] == {"ok": True, "configured": bool(settings.REDIS_URL)}
    assert checks["broker"] == {"ok": True}
    assert checks["beat"]["ok"] is True and 0 <= checks["beat"]["ageSeconds"] <= 2
    assert checks["workers"]["ok"] is True and checks["workers"]["seen"] == 1
    assert 0 <= checks["workers"]["lastSeenSeconds"] <= 2
    assert checks["deliveries"] == {"ok": True, "due": 0, "oldestDueSeconds": 0}
    assert checks["mail"] == {"ok": True, "lastError": None, "failingSeconds": None}


def test_a_stopped_beat_is_degraded_and_named_while_readyz_stays_ok(client, alive):
    Heartbeat.objects.filter(name="beat").update(at=timezone.now() - timedelta(seconds=125))

    status, body = installation(client)

    assert (status, body["status"], failing(body)) == (503, "degraded", {"beat"})
    assert 124 <= body["checks"]["beat"]["ageSeconds"] <= 130
    assert client.get("/readyz").status_code == 200


def test_a_beat_that_never_ran_is_degraded(client, alive):
    Heartbeat.objects.filter(name="beat").delete()

    status, body = installation(client)

    assert (status, body["status"]) == (503, "degraded")
    assert body["checks"]["beat"] == {"ok": False, "ageSeconds": None}


def test_a_heartbeat_under_two_minutes_old_is_ok(client, alive):
    Heartbeat.objects.filter(name="beat").update(at=timezone.now() - timedelta(seconds=100))

    assert installation(client)[0] == 200


def test_redis_that_does_not_answer_is_degraded_and_named_without_its_address(client, alive,
                                                                            settings):
    from core.infra import redis as redis_client

    settings.REDIS_URL = "redis://:s3cret@127.0.0.1:1/0"  # nothing listens on port 1
    redis_client.client.cache_clear()
    try:
        response = client.get("/status", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
        ready = client.get("/readyz")
    finally:
        redis_client.client.cache_clear()

    body = response.json()
    assert (response.status_code, body["status"], failing(body)) == (503, "degraded", {"redis"})
    assert body["checks"]["redis"] == {"ok": False, "error": "ConnectionError"}
    assert ready.status_code == 200
    for text in (response.content.decode(), ready.content.decode()):
        assert "s3cret" not in text and "127.0.0.1" not in text


@pytest.mark.redis
def test_redis_is_checked_when_configured(client, alive):
    _status, body = installation(client)

    assert body["checks"]["redis"] == {"ok": True, "configured": True}


def test_an_unreachable_broker_is_degraded_and_not_named(client, alive, settings):
    from tests.integrations.conftest import reset_broker_connections

    # Celery reads Django's settings as they are now; an assignment to the app's conf would
    # outlive the test and send every later test's messages to that broker.
    settings.CELERY_BROKER_URL = "redis://:s3cret@127.0.0.1:1/0"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {}
    reset_broker_connections()
    try:
        response = client.get("/status", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    finally:
        reset_broker_connections()

    body = response.json()
    assert (response.status_code, body["status"]) == (503, "degraded")
    assert "broker" in failing(body)
    assert "s3cret" not in response.content.decode()
    assert "127.0.0.1" not in response.content.decode()


def test_workers_not_seen_for_two_minutes_are_degraded(client, alive):
    Heartbeat.objects.filter(name__startswith="worker:").update(
        at=timezone.now() - timedelta(minutes=3))

    status, body = installation(client)

    assert (status, body["status"], failing(body)) == (503, "degraded", {"workers"})
    assert body["checks"]["workers"]["seen"] == 0
    assert 179 <= body["checks"]["workers"]["lastSeenSeconds"] <= 190
    assert body["checks"]["workers"]["silent"] == ["celery@box"]


def test_no_worker_ever_seen_is_degraded(client, alive):
    Heartbeat.objects.filter(name__startswith="worker:").delete()

    _status, body = installation(client)

    assert body["checks"]["workers"] == {"ok": False, "seen": 0, "lastSeenSeconds": None,
                                         "silent": []}


def test_a_worker_not_seen_for_two_minutes_is_named_while_the_others_carry_on(client, alive):
    heartbeat.stamp_worker("celery@b")
    Heartbeat.objects.filter(name="worker:celery@b").update(
        at=timezone.now() - timedelta(minutes=3))

    status, body = installation(client)

    assert status == 200
    assert body["checks"]["workers"]["seen"] == 1
    assert body["checks"]["workers"]["silent"] == ["celery@b"]
    heartbeat.stamp_worker("celery@b")  # started again
    assert installation(client)[1]["checks"]["workers"]["silent"] == []


def test_the_worker_stamps_its_heartbeat_from_its_timer(client, alive, monkeypatch):
    """The bootstep config/celery.py adds to every worker: a stamp at start, then one every
    30 s from the worker's own timer."""
    from config.celery import app

    # The stamp closes the worker's connection; the test's must stay open in its transaction.
    monkeypatch.setattr(connection, "close", lambda: None)
    assert workers.WorkerHeartbeat in app.steps["worker"]
    Heartbeat.objects.filter(name__startswith="worker:").delete()
    worker = SimpleNamespace(hostname="celery@web-7", timer=Timer())
    step = workers.WorkerHeartbeat(worker)

    step.start(worker)

    assert installation(client)[1]["checks"]["workers"]["seen"] == 1
    [(eta, _priority, entry)] = worker.timer.queue
    assert 29 <= eta - time.monotonic() <= 30  # kombu's timer keeps monotonic time
    Heartbeat.objects.update(at=timezone.now() - timedelta(minutes=5))
    entry()  # the timer's call, 30 s later
    assert installation(client)[1]["checks"]["workers"]["seen"] == 1
    step.stop(worker)
    assert entry.canceled


def test_workers_gone_for_a_day_are_forgotten(db):
    heartbeat.stamp_worker("celery@old")
    Heartbeat.objects.update(at=timezone.now() - timedelta(days=2))

    heartbeat.stamp_worker("celery@new")

    assert list(Heartbeat.objects.values_list("name", flat=True)) == ["worker:celery@new"]


def test_a_due_delivery_waiting_past_ten_minutes_is_degraded(client, alive, hook, form):
    add_submission(form, {"name": "Ada"})
    add_submission(form, {"name": "Bob"})
    Delivery.objects.update(state="pending", next_attempt_at=timezone.now()
                            - timedelta(minutes=11))

    status, body = installation(client)

    assert (status, body["status"], failing(body)) == (503, "degraded", {"deliveries"})
    assert body["checks"]["deliveries"]["due"] == 2
    assert 659 <= body["checks"]["deliveries"]["oldestDueSeconds"] <= 670
    assert client.get("/readyz").status_code == 200


def test_a_delivery_due_a_few_minutes_is_ok(client, alive, hook, form):
    add_submission(form, {"name": "Ada"})
    Delivery.objects.update(state="pending", next_attempt_at=timezone.now()
                            - timedelta(minutes=3))

    status, body = installation(client)

    assert status == 200
    assert 179 <= body["checks"]["deliveries"]["oldestDueSeconds"] <= 190


def test_an_unreachable_mail_server_is_degraded_with_its_error_type_alone(client, alive,
                                                                        owner_api, public,
                                                                        settings):
    form = owner_api.post("/api/v1/forms", {"name": "Contact"}, format="json").json()
    settings.EMAIL_BACKEND = "tests.operations.test_status.RefusedConnection"
    settings.DELIVERY_RETRY_DELAYS = [300]

    assert public.post(f"/api/v1/f/{form['slug']}", {"name": "Ada"},
                       format="json").status_code == 200  # intake is not held up by mail
    response = client.get("/status", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    ready = client.get("/readyz")

    body = response.json()
    assert (response.status_code, body["status"], failing(body)) == (503, "degraded", {"mail"})
    assert body["checks"]["mail"]["lastError"] == "ConnectionRefusedError"
    assert 0 <= body["checks"]["mail"]["failingSeconds"] <= 2
    assert "10.9.8.7" not in response.content.decode()
    assert "mail.example.net" not in response.content.decode()
    assert ready.status_code == 200

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    submit(public, SimpleNamespace(slug=form["slug"]), {"name": "Bob"})  # this one goes out
    assert installation(client)[1]["checks"]["mail"]["ok"] is True


def test_without_the_database_it_is_unavailable_and_names_no_address(client, alive,
                                                                     monkeypatch):
    def broken(*_args):
        raise OperationalError('connection to server at "10.1.2.3", port 5432 failed')

    with monkeypatch.context() as patched:
        patched.setattr(connection, "ensure_connection", broken)
        response = client.get("/status", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")

    body = response.json()
    assert (response.status_code, body["status"]) == (503, "unavailable")
    assert body["checks"]["database"] == {"ok": False, "error": "OperationalError"}
    for name in ("beat", "workers", "deliveries", "mail"):
        assert body["checks"][name] == {"ok": False, "error": "database unavailable"}
    assert "10.1.2.3" not in response.content.decode()


def test_unapplied_migrations_are_unavailable(client, alive, monkeypatch):
    from django.db.migrations.executor import MigrationExecutor

    monkeypatch.setattr(readiness, "_migrated", False)
    monkeypatch.setattr(MigrationExecutor, "migration_plan", lambda self, targets: [("m", False)])

    status, body = installation(client)

    assert (status, body["status"]) == (503, "unavailable")
    assert body["checks"]["database"] == {"ok": False, "unappliedMigrations": 1}


@pytest.fixture
def scheduler(tmp_path, monkeypatch):
    """A beat's scheduler, as `celery beat` makes it; call it again for a second beat."""
    from config.celery import app
    from operations.beat import HeartbeatScheduler

    # Beat drops its connection between asks; the test's must stay open in its transaction.
    monkeypatch.setattr("django.db.close_old_connections", lambda: None)
    made = iter(range(100))

    def make() -> HeartbeatScheduler:
        filename = str(tmp_path / f"schedule-{next(made)}")
        return HeartbeatScheduler(app=app, schedule_filename=filename, lazy=True)

    return make


def test_the_beat_scheduler_stamps_the_heartbeat_from_its_loop(client, alive, scheduler):
    beat = scheduler()
    assert beat.holds_schedule()

    assert installation(client)[0] == 200
    Heartbeat.objects.filter(name="beat").update(at=timezone.now() - timedelta(minutes=5))
    assert failing(installation(client)[1]) == {"beat"}
    assert beat.holds_schedule()
    assert installation(client)[0] == 200


def test_of_two_beats_only_one_runs_the_schedule(db, scheduler, monkeypatch):
    first, second = scheduler(), scheduler()
    sent = []
    monkeypatch.setattr(first.app, "send_task", lambda name, *a, **k: sent.append(name))

    assert (first.holds_schedule(), second.holds_schedule()) == (True, False)
    assert first.holds_schedule() and not second.holds_schedule()  # each stamp renews it
    second.tick()
    assert sent == []  # the beat standing by sends nothing, however due its schedule


def test_a_beat_that_stopped_stamping_loses_the_schedule_after_its_lease(db, scheduler):
    from operations.beat import LEASE

    first, second = scheduler(), scheduler()
    assert first.holds_schedule()
    Heartbeat.objects.filter(name="beat").update(
        at=timezone.now() - LEASE + timedelta(seconds=2))
    assert not second.holds_schedule()  # within the lease: still the first's

    Heartbeat.objects.filter(name="beat").update(at=timezone.now() - LEASE - timedelta(seconds=1))
    assert second.holds_schedule()
    first.held_until = 0.0  # its own lease has run out too
    assert not first.holds_schedule()  # back (a paused machine): it stands by


def test_beat_runs_the_heartbeat_scheduler(settings):
    assert settings.CELERY_BEAT_SCHEDULER == "operations.beat:HeartbeatScheduler"


def test_the_command_prints_the_status_and_exits_zero_when_ok(alive, capsys):
    call_command("status")

    printed = json.loads(capsys.readouterr().out)
    assert printed["status"] == "ok"
    assert printed["version"] == formflow.version()
    assert set(printed["checks"]) == CHECKS


def test_the_command_exits_one_when_degraded(db, capsys):
    with pytest.raises(SystemExit) as exited:
        call_command("status")

    assert exited.value.code == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["status"] == "degraded"
    assert failing(printed) == {"beat", "workers"}


def test_the_command_exits_two_when_unavailable(alive, capsys, monkeypatch):
    def broken(*_args):
        raise OperationalError("database is away")

    with monkeypatch.context() as patched, pytest.raises(SystemExit) as exited:
        patched.setattr(connection, "ensure_connection", broken)
        call_command("status")

    assert exited.value.code == 2
    assert json.loads(capsys.readouterr().out)["status"] == "unavailable"
