"""Readiness: whether this process can do its work, check by check (contract, "Operations").

Each check answers ``{"ok": bool, ...}`` and never names a host, an address or a secret: the
answer is public (load balancers and orchestrators read it without credentials). A check that
raises is not ok, with the error's type only.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

import formflow
from core import clock
from integrations.models import Delivery, DeliveryState
from operations import heartbeat

logger = logging.getLogger(__name__)

BEAT_MAX_AGE = timedelta(minutes=2)
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


def redis() -> Check:
    from core.infra import redis as redis_client

    client = redis_client.client()
    assert client is not None
    client.ping()
    return {"ok": True}


def broker() -> Check:
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


def deliveries() -> Check:
    """The oldest due delivery's age: a backlog that grows means workers are missing or
    failing. Read through the partial index of pending rows."""
    now = clock.now()
    oldest = (
        Delivery.objects.filter(state=DeliveryState.PENDING, next_attempt_at__lte=now)
        .order_by("next_attempt_at")
        .values_list("next_attempt_at", flat=True)
        .first()
    )
    age = 0.0 if oldest is None else max((now - oldest).total_seconds(), 0.0)
    return {"ok": age <= DELIVERY_MAX_AGE.total_seconds(), "ageSeconds": round(age)}


def _checks() -> dict[str, Callable[[], Check]]:
    checks: dict[str, Callable[[], Check]] = {"database": database}
    if settings.REDIS_URL:
        checks["redis"] = redis
    if settings.CELERY_BROKER_URL != "memory://":  # memory: the test suite's, in-process
        checks["broker"] = broker
    checks["beat"] = beat
    checks["deliveries"] = deliveries
    return checks


def _run(name: str, check: Callable[[], Check]) -> Check:
    try:
        return check()
    except Exception as error:
        logger.warning("readiness check %s failed: %s", name, error)
        return {"ok": False, "error": type(error).__name__}


NEEDS_DATABASE = ("beat", "deliveries")


def report() -> dict[str, Any]:
    """The whole answer of /readyz and ``manage.py status``."""
    results: dict[str, Check] = {}
    for name, check in _checks().items():
        if name in NEEDS_DATABASE and "error" in results["database"]:
            # Without the database these would only repeat its error.
            results[name] = {"ok": False, "error": "database unavailable"}
        else:
            results[name] = _run(name, check)
    ready = all(result["ok"] for result in results.values())
    return {
        "status": "ok" if ready else "unavailable",
        "version": formflow.__version__,
        "checks": results,
    }
