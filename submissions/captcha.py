"""The one client for the CAPTCHA providers' siteverify APIs.

reCAPTCHA, hCaptcha and Turnstile take the same form-encoded ``secret``, ``response`` and
``remoteip`` and answer ``{"success": bool}``; they differ in the field the widget adds to the
form and in the address that verifies it (``*_VERIFY_URL``).
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import requests
from django.conf import settings

logger = logging.getLogger(__name__)
TIMEOUT_SECONDS = 5


class Provider(NamedTuple):
    token_field: str
    verify_url_setting: str


PROVIDERS = {
    "recaptcha": Provider("g-recaptcha-response", "RECAPTCHA_VERIFY_URL"),
    "hcaptcha": Provider("h-captcha-response", "HCAPTCHA_VERIFY_URL"),
    "turnstile": Provider("cf-turnstile-response", "TURNSTILE_VERIFY_URL"),
}
DEFAULT_PROVIDER = "recaptcha"
# Never stored, whichever provider the form uses: a page may still carry another widget.
TOKEN_FIELDS = frozenset(provider.token_field for provider in PROVIDERS.values())


def token_field(provider: str) -> str:
    return PROVIDERS[provider].token_field


def verify(*, provider: str, secret: str, token: str, remote_ip: str) -> bool:
    """True only when the provider says the token is valid; unreachable counts as failed."""
    if not token:
        return False
    url = getattr(settings, PROVIDERS[provider].verify_url_setting)
    try:
        response = requests.post(
            url,
            data={"secret": secret, "response": token, "remoteip": remote_ip},
            timeout=TIMEOUT_SECONDS,
            allow_redirects=False,
        )
        response.raise_for_status()
        return response.json().get("success") is True
    except (requests.RequestException, ValueError, AttributeError) as error:
        logger.warning("%s verification failed: %s", provider, error)
        return False
