"""Hands one event to one integration and says what happened, in one shape for all kinds
(each kind's transport is in its package, integrations/kinds/)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core import clock, metrics
from integrations import kinds
from integrations.kinds.base import Outcome
from integrations.models import Integration

__all__ = ["Outcome", "deliver"]


def deliver(integration: Integration, event: dict[str, Any], msg_id: str) -> Outcome:
    """The attempt's outcome; it is counted (formflow_deliveries_total) where it is recorded,
    which alone knows whether a failure is retried (integrations/delivery/record.py)."""
    outcome = kinds.get(integration.type).transport(integration, event, msg_id)
    if outcome.ok and event["type"] == "submission.created":
        submitted = datetime.fromisoformat(event["data"]["submittedAt"])
        metrics.delivery_seconds.observe(max((clock.now() - submitted).total_seconds(), 0.0))
    return outcome
