"""Web origins (scheme://host[:port]) as browsers send them in Origin and Referer."""

from __future__ import annotations

from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_origin(value: str) -> str | None:
    """The canonical form of an origin, or None when ``value`` is not one."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port and port != DEFAULT_PORTS[parts.scheme]:
        return f"{parts.scheme}://{host}:{port}"
    return f"{parts.scheme}://{host}"


def origin_of_url(url: str) -> str | None:
    """The origin a full URL (such as a Referer) belongs to."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return normalize_origin(f"{parts.scheme}://{parts.netloc}") if parts.netloc else None
