"""An integration named by where it delivers: what the dashboard, its ledger and the admin
call it, so an owner and an operator can tell two webhooks apart."""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import urlsplit


class Named(Protocol):
    """What naming reads of an integration (the model imports this module, not the reverse)."""

    type: Any
    config: Any


def destination(integration: Named) -> str:
    """"Webhook to hooks.example.com", "Email to a@b.c", "Slack": which one, at a glance."""
    config = integration.config or {}
    kind = integration.type
    if kind == "WEBHOOK":
        return f"Webhook to {urlsplit(config.get('url', '')).hostname or 'an address'}"
    if kind == "EMAIL":
        return f"Email to {config.get('toEmail') or 'an address'}"
    if kind == "OWNER_EMAIL":
        return "Email to you"
    if kind == "GOOGLE_SHEETS":
        title = config.get("spreadsheetTitle") or config.get("title")
        return f"Google Sheets: {title}" if title else "Google Sheets"
    return {"SLACK": "Slack", "DISCORD": "Discord"}.get(kind, kind.replace("_", " ").title())
