"""Validating an integration's config: the rules the kinds share, and splitting the secrets
from the rest (each kind's own rules are in integrations/kinds/)."""

from __future__ import annotations

import ipaddress
import socket
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

from core.errors import invalid
from integrations.clients import http
from integrations.models import EVENT_TYPES

if TYPE_CHECKING:
    from integrations.kinds.base import Kind


# Said where a developer meets the refusal, so the setting is found without the docs.
LOCAL_RECEIVERS = (" For a receiver on this machine or a private network (development), the"
                   " operator can set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.")


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


def url_errors(config: dict[str, Any], key: str, missing: str) -> dict[str, str]:
    """The rules for every URL FormFlow posts to (webhooks, Slack, Discord): https, a host
    read the same way by this check and by the HTTP client, and no private address written
    out (the client checks every address it resolves too)."""
    url, name = config.get(key), f"config.{key}"
    if not isinstance(url, str) or len(url) > 2000:
        return {name: missing}
    if any(char == "\\" or char.isspace() or ord(char) < 32 for char in url):
        return {name: "The URL must not contain backslashes, spaces or control characters."}
    try:
        parts = urlsplit(url)
        hostname = parts.hostname
    except ValueError:  # an unclosed or invalid [IPv6] host
        return {name: "The URL must be an absolute https:// URL."}
    schemes = ("https", "http") if http.private_allowed() else ("https",)
    if parts.scheme == "http" and hostname and not http.private_allowed():
        return {name: "The URL must be an absolute https:// URL." + LOCAL_RECEIVERS}
    if parts.scheme not in schemes or not hostname:
        return {name: "The URL must be an absolute https:// URL."}
    # Validation and the HTTP client must read the same host, or a check of one host would
    # let the client connect to another.
    if _client_host(url) != hostname.lower():
        return {name: "The URL's host is ambiguous."}
    if not http.private_allowed() and _literal_private_host(hostname):
        return {name: "The URL must point to a public address." + LOCAL_RECEIVERS}
    return {}


def event_errors(events: Any, name: str) -> dict[str, str]:
    """A list of event names to receive: at least one, each known, none twice."""
    choose = f"Choose among {', '.join(EVENT_TYPES)}."
    if not isinstance(events, list) or not events:
        return {name: f"Give a list of at least one event. {choose}"}
    if any(not isinstance(event, str) or event not in EVENT_TYPES for event in events):
        return {name: f"Unknown event. {choose}"}
    if len(set(events)) != len(events):
        return {name: "An event is listed twice."}
    return {}


def split_config(kind: Kind, config: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate a full config for ``kind``, its defaults filled in: (public part, secret
    part)."""
    if not isinstance(config, dict):
        raise invalid({"config": "The config must be an object."})
    config = {**kind.defaults, **config}
    given = kind.generated_keys & set(config)
    if given:
        raise invalid({f"config.{key}": "It is generated; it cannot be set." for key in given})
    unknown = set(config) - kind.keys
    if unknown:
        raise invalid({f"config.{key}": "Unknown field." for key in sorted(unknown)})
    errors = kind.errors(config)
    if errors:
        raise invalid(errors)
    public = {k: v for k, v in config.items() if k not in kind.secret_keys}
    secrets = {k: v for k, v in config.items() if k in kind.secret_keys}
    return public, secrets
