"""The /metrics scrape: every process's counters (core/metrics.py), added up, and what the
database says now."""

from __future__ import annotations

from collections.abc import Iterator

from django.conf import settings
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.multiprocess import MultiProcessCollector

from core import clock
from integrations.models import Delivery, DeliveryState


class OutboxCollector:
    """The outbox's due deliveries, counted at scrape time through the partial index of
    pending rows: the number that grows when workers are missing or too few."""

    def collect(self) -> Iterator[Metric]:
        due = Delivery.objects.filter(
            state=DeliveryState.PENDING, next_attempt_at__lte=clock.now()).count()
        gauge = GaugeMetricFamily("formflow_outbox_due", "Deliveries due and not yet taken")
        gauge.add_metric([], due)
        yield gauge


def exposition() -> tuple[bytes, str]:
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(settings.METRICS_DIR))
    registry.register(OutboxCollector())
    # The text format every Prometheus reads (generate_latest writes it).
    return generate_latest(registry), CONTENT_TYPE_PLAIN_0_0_4
