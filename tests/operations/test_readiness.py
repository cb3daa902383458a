"""Liveness and readiness (contract, "Operations"): /readyz asks only whether this process
can take submissions; what the rest of the installation is doing is /status's
(tests/operations/test_status.py)."""

import os
import re
import subprocess
from datetime import timedelta

import pytest
from django.db import OperationalError, connection
from django.utils import timezone

import formflow
from integrations.models import Delivery
from operations import readiness
from operations.models import Heartbeat
from tests.conftest import add_submission


def ready(client):
    response = client.get("/readyz")
    return response.status_code, response.json()


@pytest.fixture
def uploads_in(settings):
    """The upload storage as a folder of the test's choosing."""

    def point_at(folder):
        settings.STORAGES = {**settings.STORAGES, "uploads": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(folder)}}}

    return point_at


def test_healthz_answers_ok_without_checking_anything(client, monkeypatch):
    def broken(*_args):
        raise OperationalError("database is away")

    with monkeypatch.context() as patched:
        patched.setattr(connection, "ensure_connection", broken)
        response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_checks_the_database_and_the_upload_folder_only(client, db, uploads_in,
                                                                tmp_path):
    uploads_in(tmp_path / "uploads")

    status, body = ready(client)

    assert status == 200
    assert body == {"status": "ok", "version": formflow.version(), "checks": {
        "database": {"ok": True, "unappliedMigrations": 0}, "storage": {"ok": True}}}
    assert list(tmp_path.joinpath("uploads").iterdir()) == []  # the probe wrote nothing


def test_the_version_carries_the_commit_of_the_checkout(client, db):
    """From a git checkout: 1.2.0+abc1234."""
    if not (formflow.ROOT / ".git").exists():
        if os.environ.get("CI"):
            pytest.fail("CI runs from a git clone: the version must carry its commit there")
        pytest.skip("not run from a git checkout")
    _status, body = ready(client)

    assert re.fullmatch(rf"{re.escape(formflow.__version__)}\+[0-9a-f]{{7}}", body["version"])
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=formflow.ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert body["version"] == f"{formflow.__version__}+{head[:7]}"


def test_an_image_without_git_takes_the_commit_from_its_build_stamp(monkeypatch, tmp_path):
    stamp = tmp_path / "COMMIT"
    stamp.write_text("0123456789abcdef0123456789abcdef01234567\n")
    monkeypatch.setattr(formflow, "COMMIT_FILE", stamp)
    monkeypatch.setattr(formflow, "ROOT", tmp_path)  # no .git here
    formflow.commit.cache_clear()
    try:
        assert formflow.version() == f"{formflow.__version__}+0123456"
        stamp.unlink()
        formflow.commit.cache_clear()
        assert formflow.version() == formflow.__version__  # neither: the release alone
    finally:
        formflow.commit.cache_clear()


def test_an_object_store_has_no_folder_to_check(client, db, settings):
    settings.STORAGES = {**settings.STORAGES, "uploads": {
        "BACKEND": "django.core.files.storage.InMemoryStorage"}}

    status, body = ready(client)

    assert status == 200
    assert set(body["checks"]) == {"database"}


def test_readyz_is_unavailable_when_the_upload_folder_cannot_be_written(client, db, uploads_in,
                                                                        tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    uploads_in(blocker / "uploads")  # root writes anywhere, but never under a file

    status, body = ready(client)

    assert status == 503
    assert body["status"] == "unavailable"
    assert body["checks"]["storage"] == {"ok": False, "error": "NotADirectoryError"}
    assert str(tmp_path) not in str(body)


def test_readyz_is_unavailable_when_the_upload_folder_is_read_only_or_full(
        client, db, uploads_in, tmp_path, monkeypatch):
    uploads_in(tmp_path / "uploads")
    real_access, real_statvfs = os.access, os.statvfs

    def read_only(path, mode):  # as on a file system mounted read-only (EROFS)
        return not mode & os.W_OK and real_access(path, mode)

    with monkeypatch.context() as patched:
        patched.setattr(os, "access", read_only)
        assert ready(client)[1]["checks"]["storage"] == {"ok": False}

    def full(path):
        return os.statvfs_result((4096, 4096, 100, 0, 0, 10, 0, 0, 0, 255))

    with monkeypatch.context() as patched:
        patched.setattr(os, "statvfs", full)
        status, body = ready(client)
    assert (status, body["checks"]["storage"]) == (503, {"ok": False})
    assert real_statvfs(tmp_path).f_bavail > 0 and ready(client)[0] == 200


def test_readyz_fails_with_unapplied_migrations(client, db, monkeypatch):
    from django.db.migrations.executor import MigrationExecutor

    monkeypatch.setattr(readiness, "_migrated", False)
    monkeypatch.setattr(MigrationExecutor, "migration_plan", lambda self, targets: [("m", False)])

    status, body = ready(client)

    assert status == 503
    assert body["checks"]["database"] == {"ok": False, "unappliedMigrations": 1}


def test_readyz_fails_without_the_database_and_names_no_address(client, db, monkeypatch):
    def broken(*_args):
        raise OperationalError('connection to server at "10.1.2.3", port 5432 failed: '
                               'password authentication failed for user "formflow"')

    with monkeypatch.context() as patched:
        patched.setattr(connection, "ensure_connection", broken)
        response = client.get("/readyz")

    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["database"] == {"ok": False, "error": "OperationalError"}
    assert "10.1.2.3" not in response.content.decode()
    assert "formflow\"" not in response.content.decode()


# Intake works without beat, workers, Redis and the broker, and with a backlog: none of them
# may take a web process out of its load balancer (the issue: a stopped beat made every web
# process answer 503).


def test_a_beat_that_never_ran_or_stopped_long_ago_leaves_readyz_ok(client, db):
    assert ready(client)[0] == 200
    Heartbeat.objects.create(name="beat", at=timezone.now() - timedelta(minutes=30))

    assert ready(client)[0] == 200


def test_a_backlog_leaves_readyz_ok(client, db, hook, form):
    add_submission(form, {"name": "Ada"})
    Delivery.objects.update(state="pending", next_attempt_at=timezone.now()
                            - timedelta(hours=2))

    assert ready(client)[0] == 200


def test_redis_that_does_not_answer_leaves_readyz_ok(client, db, settings):
    from core.infra import redis as redis_client

    settings.REDIS_URL = "redis://:s3cret@127.0.0.1:1/0"  # nothing listens on port 1
    redis_client.client.cache_clear()
    try:
        status, body = ready(client)
    finally:
        redis_client.client.cache_clear()

    assert status == 200
    assert "redis" not in body["checks"]


def test_an_unreachable_broker_leaves_readyz_ok(client, db, settings):
    from tests.integrations.conftest import reset_broker_connections

    settings.CELERY_BROKER_URL = "redis://:s3cret@127.0.0.1:1/0"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {}
    reset_broker_connections()
    try:
        status, _body = ready(client)
    finally:
        reset_broker_connections()

    assert status == 200


def test_the_embedded_broker_is_ok_when_its_queue_folder_is_writable(settings, tmp_path):
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"data_folder_in": str(tmp_path)}
    assert readiness.broker() == {"ok": True}
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"data_folder_in": str(tmp_path / "gone")}
    assert readiness.broker() == {"ok": False}
