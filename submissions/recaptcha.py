"""The one client for reCAPTCHA's siteverify API (RECAPTCHA_VERIFY_URL)."""

from __future__ import annotations

import logging

import requests
from django.conf import settings

logger = logging.getLogger(__name__)
TIMEOUT_SECONDS = 5


def verify(*, secret: str, token: str, remote_ip: str) -> bool:
    """True only when the provider says the token is valid; unreachable counts as failed."""
    if not token:
        return False
    try:
        response = requests.post(
            settings.RECAPTCHA_VERIFY_URL,
            data={"secret": secret, "response": token, "remoteip": remote_ip},
            timeout=TIMEOUT_SECONDS,
            allow_redirects=False,
        )
        response.raise_for_status()
        return response.json().get("success") is True
    except (requests.RequestException, ValueError, AttributeError) as error:
        logger.warning("reCAPTCHA verification failed: %s", error)
        return False
