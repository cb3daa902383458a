"""Per-type validation of integration config; secrets are split from the rest."""

from __future__ import annotations

import ipaddress
import socket
from email.utils import parseaddr
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

from config.errors import ServiceError
from integrations.clients import http
from integrations.models import IntegrationType

EMAIL_KEYS = {"apiKey", "fromEmail", "toEmail", "subject"}
WEBHOOK_KEYS = {"url"}
SECRET_KEYS = {IntegrationType.EMAIL: {"apiKey"}, IntegrationType.WEBHOOK: {"signingSecret"}}


def invalid(details: dict[str, str]) -> ServiceError:
    return ServiceError("validation_error", "Some fields are not valid.", details=details)


def _email_address(value: Any, *, display_name_allowed: bool) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "Enter an email address."
    name, address = parseaddr(value)
    if name and not display_name_allowed:
        return "Enter a plain email address."
    try:
        validate_email(address)
    except ValidationError:
        return "Enter a valid email address."
    return None


def _email_errors(config: dict[str, Any]) -> dict[str, str]:
    errors = {}
    api_key = config.get("apiKey")
    if not isinstance(api_key, str) or not api_key.strip() or len(api_key) > 500:
        errors["config.apiKey"] = "Enter the email provider's API key."
    for key, named in (("fromEmail", True), ("toEmail", False)):
        problem = _email_address(config.get(key), display_name_allowed=named)
        if problem:
            errors[f"config.{key}"] = problem
    subject = config.get("subject")
    if subject is not None and (not isinstance(subject, str) or len(subject) > 200):
        errors["config.subject"] = "The subject must be text of at most 200 characters."
    return errors


def _literal_private_host(host: str) -> bool:
    """A host written as a private address, in any spelling the resolver accepts: dotted,
    short (127.1), hex (0x7f.1), octal (0177.0.0.1) or one number (2130706433)."""
    host = host.rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return not http.is_public(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        packed = socket.inet_aton(host)  # the legacy forms getaddrinfo also accepts
    except OSError:
        return False
    return not http.is_public(ipaddress.IPv4Address(packed))


def _client_host(url: str) -> str | None:
    """The host the HTTP client will connect to (requests parses URLs with urllib3)."""
    try:
        return (parse_url(url).host or "").strip("[]").lower() or None
    except LocationParseError:
        return None


def _webhook_errors(config: dict[str, Any]) -> dict[str, str]:
    url = config.get("url")
    if not isinstance(url, str) or len(url) > 2000:
        return {"config.url": "Enter the HTTPS URL that receives the webhooks."}
    if any(char == "\\" or char.isspace() or ord(char) < 32 for char in url):
        return {"config.url": "The URL must not contain backslashes, spaces or control characters."}
    parts = urlsplit(url)
    schemes = ("https", "http") if http.private_allowed() else ("https",)
    if parts.scheme not in schemes or not parts.hostname:
        return {"config.url": "The URL must be an absolute https:// URL."}
    # Validation and the HTTP client must read the same host, or a check of one host would
    # let the client connect to another.
    if _client_host(url) != parts.hostname.lower():
        return {"config.url": "The URL's host is ambiguous."}
    if not http.private_allowed() and _literal_private_host(parts.hostname):
        return {"config.url": "The URL must point to a public address."}
    return {}


def split_config(kind: str, config: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate a full config and return (public part, secret part)."""
    if not isinstance(config, dict):
        raise invalid({"config": "The config must be an object."})
    if "signingSecret" in config:
        raise invalid(
            {"config.signingSecret": "The signing secret is generated; it cannot be set."}
        )
    known = EMAIL_KEYS if kind == IntegrationType.EMAIL else WEBHOOK_KEYS
    unknown = set(config) - known
    if unknown:
        raise invalid({f"config.{key}": "Unknown field." for key in sorted(unknown)})
    errors = _email_errors(config) if kind == IntegrationType.EMAIL else _webhook_errors(config)
    if errors:
        raise invalid(errors)
    secret_keys = SECRET_KEYS[kind]
    public = {k: v for k, v in config.items() if k not in secret_keys and k in known}
    secrets = {k: v for k, v in config.items() if k in secret_keys}
    return public, secrets


def mask(secret: str) -> str:
    return "****" + secret[-4:] if len(secret) > 4 else "****"
