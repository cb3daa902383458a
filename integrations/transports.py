"""Hands one event to one integration and says what happened, in one shape for all kinds
(each kind's transport is in its package, integrations/kinds/)."""

from __future__ import annotations

from typing import Any

from integrations import kinds
from integrations.kinds.base import Outcome
from integrations.models import Integration

__all__ = ["Outcome", "deliver"]


def deliver(integration: Integration, event: dict[str, Any], msg_id: str) -> Outcome:
    return kinds.get(integration.type).transport(integration, event, msg_id)
