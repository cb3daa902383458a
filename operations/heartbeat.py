"""Heartbeats of the processes that have no request to answer: beat stamps its own from its
scheduling loop (operations/beat.py), each worker its own from its timer
(operations/workers.py). /status and the metrics read their ages."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import DurationField, ExpressionWrapper, F, Max, Q

from core.infra.dbtime import DatabaseNow
from operations.models import Heartbeat

BEAT = "beat"
WORKER_PREFIX = "worker:"
# A worker not seen for a day is gone (replaced, scaled down): its row is dropped.
WORKER_FORGOTTEN_AFTER = timedelta(days=1)


def stamp(name: str = BEAT) -> None:
    if not Heartbeat.objects.filter(name=name).update(at=DatabaseNow()):
        Heartbeat.objects.get_or_create(name=name, defaults={"at": DatabaseNow()})


def hold(holder: str, lease: timedelta, name: str = BEAT) -> bool:
    """Stamp ``name`` as ``holder`` if it holds it already, if no one does (a row stamped
    before 1.2.0), or if whoever held it has not stamped for ``lease`` (it died, or stopped):
    True when ``holder`` holds it now. One conditional UPDATE, so of two callers at once only
    one wins."""
    holder = holder[:Heartbeat._meta.get_field("holder").max_length]
    free = Q(holder="") | Q(at__lt=DatabaseNow() - lease)
    if Heartbeat.objects.filter(Q(holder=holder) | free, name=name).update(
            at=DatabaseNow(), holder=holder):
        return True
    _row, created = Heartbeat.objects.get_or_create(
        name=name, defaults={"at": DatabaseNow(), "holder": holder})
    return created


def worker_name(hostname: str) -> str:
    return (WORKER_PREFIX + hostname)[:Heartbeat._meta.get_field("name").max_length]


def stamp_worker(hostname: str) -> None:
    stamp(worker_name(hostname))
    Heartbeat.objects.filter(name__startswith=WORKER_PREFIX,
                             at__lt=DatabaseNow() - WORKER_FORGOTTEN_AFTER).delete()


def _aged():
    return Heartbeat.objects.annotate(
        age=ExpressionWrapper(DatabaseNow() - F("at"), output_field=DurationField()))


def age_seconds(name: str = BEAT) -> float | None:
    """Seconds since the last stamp, by the database's clock; None if never stamped."""
    row = _aged().filter(name=name).values_list("age", flat=True).first()
    return None if row is None else max(row.total_seconds(), 0.0)


def worker_ages() -> list[tuple[str, float]]:
    """Each known worker's node name and the seconds since its last stamp, freshest first
    (database clock)."""
    rows = _aged().filter(name__startswith=WORKER_PREFIX).order_by("-at", "name")
    return [(name.removeprefix(WORKER_PREFIX), max(age.total_seconds(), 0.0))
            for name, age in rows.values_list("name", "age")]


def last_beat_at() -> datetime | None:
    return Heartbeat.objects.filter(name=BEAT).values_list("at", flat=True).first()


def last_worker_at() -> datetime | None:
    found = Heartbeat.objects.filter(name__startswith=WORKER_PREFIX).aggregate(at=Max("at"))
    return found["at"]
