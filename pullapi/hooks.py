"""What other apps do for API keys: a registry pullapi calls and they fill at start (in their
AppConfig.ready()), so pullapi imports none of them.

A key's REST hook subscriptions are integrations' rows (integrations/models.py); when a key
reaches fewer forms (revoked, deleted, forms taken from it), integrations ends the ones it
names here and records each in the log, inside the transaction of the change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet

# (subscriptions, who made the change, why): ends them; how many ended.
SubscriptionsEnd = Callable[[QuerySet, Any, str], int]

subscription_enders: list[SubscriptionsEnd] = []


def register_subscriptions_end(end: SubscriptionsEnd) -> None:
    if end not in subscription_enders:
        subscription_enders.append(end)


def subscriptions_end(subscriptions: QuerySet, actor: Any, reason: str) -> int:
    return sum(end(subscriptions, actor, reason) for end in subscription_enders)
