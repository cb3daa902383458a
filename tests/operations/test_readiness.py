"""Liveness, readiness and `manage.py status` (contract, "Operations")."""

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import OperationalError, connection
from django.utils import timezone

import formflow
from integrations.models import Delivery
from operations import heartbeat, readiness
from operations.models import Heartbeat


@pytest.fixture
def beat_alive(db):
    heartbeat.stamp()


def ready(client):
    response = client.get("/readyz")
    return response.status_code, response.json()


def test_healthz_answers_ok_without_checking_anything(client, monkeypatch):
    def broken(*_args):
        raise OperationalError("database is away")

    with monkeypatch.context() as patched:
        patched.setattr(connection, "ensure_connection", broken)
        response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_is_ok_when_every_check_passes(client, beat_alive, settings):
    status, body = ready(client)

    assert status == 200
    assert body["status"] == "ok"
    assert body["version"] == formflow.__version__
    checks = body["checks"]
    assert checks["database"] == {"ok": True, "unappliedMigrations": 0}
    assert checks["beat"]["ok"] is True and 0 <= checks["beat"]["ageSeconds"] <= 2
    assert checks["deliveries"] == {"ok": True, "ageSeconds": 0}
    assert set(checks) == {"database", "beat", "deliveries"} | (
        {"redis"} if settings.REDIS_URL else set())


def test_readyz_is_unavailable_when_beat_never_beat(client, db):
    status, body = ready(client)

    assert status == 503
    assert body["status"] == "unavailable"
    assert body["checks"]["beat"] == {"ok": False, "ageSeconds": None}
    assert body["checks"]["database"]["ok"] is True


def test_readyz_is_unavailable_when_the_heartbeat_is_over_two_minutes_old(client, beat_alive):
    Heartbeat.objects.update(at=timezone.now() - timedelta(seconds=125))

    status, body = ready(client)

    assert status == 503
    assert body["checks"]["beat"]["ok"] is False
    assert 124 <= body["checks"]["beat"]["ageSeconds"] <= 130


def test_a_heartbeat_under_two_minutes_old_is_ok(client, beat_alive):
    Heartbeat.objects.update(at=timezone.now() - timedelta(seconds=100))

    status, body = ready(client)

    assert status == 200
    assert body["checks"]["beat"]["ok"] is True


def test_the_beat_scheduler_stamps_the_heartbeat_from_its_loop(client, db, tmp_path,
                                                              monkeypatch):
    from config.celery import app

    # Beat drops its connection between beats; the test's must stay open in its transaction.
    monkeypatch.setattr("django.db.close_old_connections", lambda: None)
    from operations.beat import HeartbeatScheduler

    scheduler = HeartbeatScheduler(app=app, schedule_filename=str(tmp_path / "schedule"),
                                   lazy=True)
    scheduler.beat_if_due()

    assert ready(client)[0] == 200
    Heartbeat.objects.update(at=timezone.now() - timedelta(minutes=5))
    scheduler.beat_if_due()  # within 30 s of the last stamp: nothing to do
    assert ready(client)[0] == 503
    scheduler.last_beat -= 31
    scheduler.beat_if_due()
    assert ready(client)[0] == 200


def test_beat_runs_the_heartbeat_scheduler(settings):
    assert settings.CELERY_BEAT_SCHEDULER == "operations.beat:HeartbeatScheduler"


def test_readyz_fails_when_a_due_delivery_waits_past_ten_minutes(client, beat_alive, hook, form):
    from tests.conftest import add_submission

    add_submission(form, {"name": "Ada"})
    Delivery.objects.update(state="pending", next_attempt_at=timezone.now()
                            - timedelta(minutes=11))

    status, body = ready(client)

    assert status == 503
    assert body["checks"]["deliveries"]["ok"] is False
    assert 659 <= body["checks"]["deliveries"]["ageSeconds"] <= 670


def test_a_delivery_due_a_few_minutes_is_still_ready(client, beat_alive, hook, form):
    from tests.conftest import add_submission

    add_submission(form, {"name": "Ada"})
    Delivery.objects.update(state="pending", next_attempt_at=timezone.now()
                            - timedelta(minutes=3))

    status, body = ready(client)

    assert status == 200
    assert 179 <= body["checks"]["deliveries"]["ageSeconds"] <= 190


def test_readyz_fails_with_unapplied_migrations(client, beat_alive, monkeypatch):
    from django.db.migrations.executor import MigrationExecutor

    monkeypatch.setattr(readiness, "_migrated", False)
    monkeypatch.setattr(MigrationExecutor, "migration_plan", lambda self, targets: [("m", False)])

    status, body = ready(client)

    assert status == 503
    assert body["checks"]["database"] == {"ok": False, "unappliedMigrations": 1}


def test_readyz_fails_without_the_database_and_names_no_address(client, beat_alive, monkeypatch,
                                                                 settings):
    def broken(*_args):
        raise OperationalError('connection to server at "10.1.2.3", port 5432 failed: '
                               'password authentication failed for user "formflow"')

    with monkeypatch.context() as patched:
        patched.setattr(connection, "ensure_connection", broken)
        response = client.get("/readyz")

    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["database"] == {"ok": False, "error": "OperationalError"}
    assert body["checks"]["beat"] == {"ok": False, "error": "database unavailable"}
    assert "10.1.2.3" not in response.content.decode()
    assert "formflow\"" not in response.content.decode()


def test_the_embedded_broker_is_ready_when_its_queue_folder_is_writable(settings, tmp_path):
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"data_folder_in": str(tmp_path)}
    assert readiness.broker() == {"ok": True}
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"data_folder_in": str(tmp_path / "gone")}
    assert readiness.broker() == {"ok": False}


def test_an_unreachable_broker_is_not_ready_and_not_named(client, beat_alive, settings):
    from tests.integrations.conftest import reset_broker_connections

    # Celery reads Django's settings as they are now; an assignment to the app's conf would
    # outlive the test and send every later test's messages to that broker.
    settings.CELERY_BROKER_URL = "redis://:s3cret@127.0.0.1:1/0"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {}
    reset_broker_connections()
    try:
        response = client.get("/readyz")
    finally:
        reset_broker_connections()

    assert response.status_code == 503
    assert response.json()["checks"]["broker"]["ok"] is False
    assert "s3cret" not in response.content.decode()
    assert "127.0.0.1" not in response.content.decode()


@pytest.mark.redis
def test_redis_is_checked_when_configured(client, beat_alive):
    status, body = ready(client)

    assert body["checks"]["redis"] == {"ok": True}
    assert status == 200


def test_readyz_is_unavailable_when_redis_does_not_answer(client, beat_alive, settings):
    from core.infra import redis as redis_client

    # Nothing listens on port 1; the client is made once per process from REDIS_URL.
    settings.REDIS_URL = "redis://:s3cret@127.0.0.1:1/0"
    redis_client.client.cache_clear()
    try:
        response = client.get("/readyz")
    finally:
        redis_client.client.cache_clear()

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["redis"] == {"ok": False, "error": "ConnectionError"}
    assert body["checks"]["database"]["ok"] is True
    assert "s3cret" not in response.content.decode()
    assert "127.0.0.1" not in response.content.decode()


def test_status_prints_the_report_and_exits_non_zero_when_not_ready(db, capsys):
    with pytest.raises(SystemExit) as exited:
        call_command("status")

    assert exited.value.code == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["status"] == "unavailable"
    assert printed["checks"]["beat"]["ok"] is False


def test_status_exits_zero_when_ready(beat_alive, capsys):
    call_command("status")

    printed = json.loads(capsys.readouterr().out)
    assert printed["status"] == "ok"
    assert printed["version"] == formflow.__version__
