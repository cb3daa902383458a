"""The /metrics scrape: every process's counters (core/metrics.py), added up, and what the
database says now (the outbox, beat's and the workers' heartbeats) with the build."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from django.conf import settings
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.multiprocess import MultiProcessCollector

import formflow
from operations import heartbeat, readiness


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    gauge = GaugeMetricFamily(name, documentation)
    gauge.add_metric([], value)
    return gauge


def _timestamp(moment: datetime | None) -> float:
    """Unix seconds; 0 for never, which any age alert reads as very old."""
    return 0.0 if moment is None else moment.timestamp()


class DatabaseCollector:
    """Read at scrape time: what the database knows at any moment is never counted."""

    def collect(self) -> Iterator[Metric]:
        due, oldest = readiness.outbox()
        yield _gauge("formflow_outbox_due", "Deliveries due and not yet taken", due)
        yield _gauge("formflow_outbox_oldest_due_seconds",
                     "How long the oldest due delivery has waited (0 when none is due)", oldest)
        yield _gauge("formflow_beat_last_run_timestamp_seconds",
                     "When beat last stamped its heartbeat (Unix seconds; 0: never)",
                     _timestamp(heartbeat.last_beat_at()))
        yield _gauge("formflow_worker_last_seen_timestamp_seconds",
                     "When the freshest worker last stamped its heartbeat (Unix seconds; "
                     "0: never)", _timestamp(heartbeat.last_worker_at()))


class BuildCollector:
    def collect(self) -> Iterator[Metric]:
        info = GaugeMetricFamily("formflow_build_info", "The version and commit running (1)",
                                 labels=["version", "commit"])
        info.add_metric([formflow.version(), formflow.commit()], 1)
        yield info


def exposition() -> tuple[bytes, str]:
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(settings.METRICS_DIR))
    registry.register(DatabaseCollector())
    registry.register(BuildCollector())
    # The text format every Prometheus reads (generate_latest writes it).
    return generate_latest(registry), CONTENT_TYPE_PLAIN_0_0_4
