"""The probes /readyz and /status are made of, check by check (contract, "Operations"), and
/readyz's answer: whether this process can take submissions now.

Each check answers ``{"ok": bool, ...}`` with its figure and never names an address or a
secret: /readyz is read without credentials. /status's ``workers`` names the workers gone
silent by their Celery node names (``celery@<host name>``), which /readyz never shows. A
check that raises is not ok, with the error's type only. This is the one module that probes
each backend the settings name (a seam, tests/project/test_architecture.py).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.storage import FileSystemStorage, storages
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

import formflow
from core import clock
from integrations import selectors as integrations
from integrations.models import Delivery, DeliveryState
from operations import heartbeat

logger = logging.getLogger(__name__)

BEAT_MAX_AGE = timedelta(minutes=2)  # beat stamps every 30 s
WORKER_MAX_AGE = timedelta(minutes=2)  # each worker stamps every 30 s
DELIVERY_MAX_AGE = timedelta(minutes=10)
BROKER_TIMEOUT_SECONDS = 2.0

Check = dict[str, Any]


def database() -> Check:
    connection.ensure_connection()
    pending = _unapplied_migrations()
    return {"ok": pending == 0, "unappliedMigrations": pending}


_migrated = False


def _unapplied_migrations() -> int:
    """Migrations of this code not yet applied. Once none are, none can be again while this
    code runs, so the graph (read from disk) is not walked on every probe after that."""
    global _migrated
    if _migrated:
        return 0
    executor = MigrationExecutor(connection)
    pending = len(executor.migration_plan(executor.loader.graph.leaf_nodes()))
    _migrated = pending == 0
    return pending


def upload_folder() -> Path | None:
    """The folder uploaded files are written to; None when they go to an object store."""
    store = storages["uploads"]
    return Path(store.location) if isinstance(store, FileSystemStorage) else None


def storage() -> Check:
    """The upload folder takes files now: it is (or can be made) a folder this process may
    write in, on a file system mounted writable, with space left. Nothing is written to find
    out, so a backup or a re-encryption walking the folder never meets a probe's file."""
    folder = upload_folder()
    assert folder is not None
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)  # as the first upload would
    writable = os.access(folder, os.W_OK | os.X_OK)
    return {"ok": writable and os.statvfs(folder).f_bavail > 0}


def redis() -> Check:
    from core.infra import redis as redis_client

    client = redis_client.client()
    if client is None:
        return {"ok": True, "configured": False}
    client.ping()
    return {"ok": True, "configured": True}


def broker() -> Check:
    if settings.CELERY_BROKER_URL == "memory://":  # the test suite's, in-process
        return {"ok": True}
    if settings.CELERY_BROKER_URL == "filesystem://":
        folder = str(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
        return {"ok": os.access(folder, os.W_OK)}
    from celery import current_app  # the project's app (config/celery.py), set at start

    with current_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_SECONDS)
    return {"ok": True}


def beat() -> Check:
    age = heartbeat.age_seconds()
    ok = age is not None and age < BEAT_MAX_AGE.total_seconds()
    return {"ok": ok, "ageSeconds": None if age is None else round(age)}


def workers() -> Check:
    """Workers stamped within WORKER_MAX_AGE, how long ago the freshest one was, and the node
    names of those heard from within the day but not since (a machine lost, a worker
    stopped): an operator sees which one to look at while the others carry on."""
    ages = heartbeat.worker_ages()
    fresh = WORKER_MAX_AGE.total_seconds()
    return {"ok": any(age < fresh for _name, age in ages),
            "seen": sum(age < fresh for _name, age in ages),
            "lastSeenSeconds": round(ages[0][1]) if ages else None,
            "silent": sorted(name for name, age in ages if age >= fresh)}


def outbox() -> tuple[int, float]:
    """Deliveries due and not taken, and how long the oldest of them has waited; read
    through the partial index of pending rows."""
    now = clock.now()
    due = Delivery.objects.filter(state=DeliveryState.PENDING, next_attempt_at__lte=now)
    oldest = due.order_by("next_attempt_at").values_list("next_attempt_at", flat=True).first()
    age = 0.0 if oldest is None else max((now - oldest).total_seconds(), 0.0)
    return due.count(), age


def deliveries() -> Check:
    """A backlog that grows means workers are missing, stuck or too few."""
    due, age = outbox()
    return {"ok": age <= DELIVERY_MAX_AGE.total_seconds(), "due": due,
            "oldestDueSeconds": round(age)}


def mail() -> Check:
    """Whether the last account or owner mail went out; the error's type alone."""
    server = integrations.mail_server()
    if server.failing_since is None:
        return {"ok": True, "lastError": None, "failingSeconds": None}
    failing = max((clock.now() - server.failing_since).total_seconds(), 0.0)
    return {"ok": False, "lastError": server.last_error, "failingSeconds": round(failing)}


def run(name: str, check: Callable[[], Check]) -> Check:
    try:
        return check()
    except Exception as error:
        logger.warning("check %s failed: %s", name, error)
        return {"ok": False, "error": type(error).__name__}


def report() -> dict[str, Any]:
    """/readyz: can this process take submissions now? Its own needs only: the database
    with every migration applied, and the upload folder when files are kept on disk. Redis,
    the broker, beat, workers and the backlog never fail it: intake works without them, and
    a probe that failed on them would take every web process out of the load balancer at
    once."""
    checks = {"database": run("database", database)}
    if upload_folder() is not None:
        checks["storage"] = run("storage", storage)
    ready = all(check["ok"] for check in checks.values())
    return {"status": "ok" if ready else "unavailable", "version": formflow.version(),
            "checks": checks}
