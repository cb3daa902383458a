"""Webhook delivery, signed the Standard Webhooks way (https://www.standardwebhooks.com)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from integrations.clients import http

SECRET_PREFIX = "whsec_"


def new_signing_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    content = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def send(*, url: str, secret: str, msg_id: str, timestamp: int, body: bytes) -> http.HttpResult:
    headers = {
        "Content-Type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secret, msg_id, timestamp, body),
    }
    return http.post(url, data=body, headers=headers)
