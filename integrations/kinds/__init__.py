"""The kinds of integration. Each lives in its own package here, holding its config rules, its
secrets and how they are shown, its OpenAPI schema, its transport and its dashboard card
(``card.html``); this registry is the one list of them. Adding a kind is a new package and a
line below.

``KINDS`` are those an owner adds and sees; ``BUILT_IN`` ones come with every form instead
(the owner's own notification email) and are delivered like the others, but never listed."""

from __future__ import annotations

from integrations.kinds import discord, email, google_sheets, owner_email, slack, webhook
from integrations.kinds.base import Kind, Outcome

KINDS: dict[str, Kind] = {
    kind.type: kind
    for kind in (webhook.KIND, email.KIND, slack.KIND, discord.KIND, google_sheets.KIND)
}

BUILT_IN: dict[str, Kind] = {owner_email.KIND.type: owner_email.KIND}

__all__ = ["BUILT_IN", "KINDS", "Kind", "Outcome", "get"]


def get(type: str) -> Kind:
    return KINDS.get(type) or BUILT_IN[type]
