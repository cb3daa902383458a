"""Beat's heartbeat: beat stamps it (operations/beat.py); readiness reads its age."""

from __future__ import annotations

from django.db.models import DurationField, ExpressionWrapper, F

from core.infra.dbtime import DatabaseNow
from operations.models import Heartbeat

BEAT = "beat"


def stamp(name: str = BEAT) -> None:
    if not Heartbeat.objects.filter(name=name).update(at=DatabaseNow()):
        Heartbeat.objects.get_or_create(name=name, defaults={"at": DatabaseNow()})


def age_seconds(name: str = BEAT) -> float | None:
    """Seconds since the last stamp, by the database's clock; None if never stamped."""
    row = (
        Heartbeat.objects.filter(name=name)
        .annotate(age=ExpressionWrapper(DatabaseNow() - F("at"), output_field=DurationField()))
        .values_list("age", flat=True)
        .first()
    )
    return None if row is None else max(row.total_seconds(), 0.0)
