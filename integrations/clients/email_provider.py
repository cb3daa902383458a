"""The email integration's provider: a Resend-compatible HTTP API at EMAIL_PROVIDER_API_URL."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from integrations.clients import http


def provider_message(result: http.HttpResult) -> str:
    """The provider's own explanation of a refusal, when it gave one."""
    try:
        body = json.loads(result.body)
    except ValueError:
        return result.error or "unknown error"
    message = body.get("message") or body.get("error") if isinstance(body, dict) else None
    return f"{result.error}: {message}" if message else (result.error or "unknown error")


def send(*, api_key: str, message: dict[str, Any]) -> http.HttpResult:
    headers = {
        "Authorization": f"Bearer {api_key}",
        "Content-Type": "application/json",
        "User-Agent": http.USER_AGENT,
    }
    # The operator's provider, not a user-chosen host: no address guard.
    return http.post(
        f"{settings.EMAIL_PROVIDER_API_URL}/emails",
        data=json.dumps(message).encode(),
        headers=headers,
        guarded=False,
    )
