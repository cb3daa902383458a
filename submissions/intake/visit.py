"""What the public endpoint needs to know about one request, read from it once.

The checks (pipeline.py, admission/, spam.py) and the answer (responders.py) take this plain
value instead of the ``HttpRequest``, so each header is interpreted in one place: the origin
that ``allowedOrigins`` is checked against is the one CORS echoes, and the address the rate
limit counts is the one stored. The body is not in it: the contract answers 403 and 429
before it looks at the body (413), so the fields are read after admission.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from django.http import HttpRequest

from core.net import client_ip, rate_key
from forms_app.origins import normalize_origin, origin_of_url

JSON_TYPES = ("application/json",)


@dataclass(frozen=True, slots=True)
class Visit:
    origin: str  # the page's origin, from Origin or else Referer, normalised; "" if neither
    origin_header: str  # the Origin header as sent, echoed by CORS; "" if none
    ip: str | None  # the client's address as stored, None if it is not an address
    rate_key: str  # what the per-address rate limit counts: the address, or its IPv6 /64
    user_agent: str
    wants_json: bool  # answer in JSON, else with pages and redirects
    idempotency_key: str | None  # the Idempotency-Key header as sent, None if none

    @classmethod
    def of(cls, request: HttpRequest) -> Visit:
        address = client_ip(request)
        return cls(
            origin=_origin(request),
            origin_header=request.headers.get("Origin", ""),
            ip=_valid_ip(address),
            rate_key=rate_key(address),
            user_agent=request.headers.get("User-Agent", ""),
            wants_json=_wants_json(request),
            idempotency_key=request.headers.get("Idempotency-Key"),
        )


def _origin(request: HttpRequest) -> str:
    origin = request.headers.get("Origin")
    if origin and origin != "null":
        return normalize_origin(origin) or ""
    referer = request.headers.get("Referer")
    return (origin_of_url(referer) or "") if referer else ""


def _valid_ip(value: str) -> str | None:
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return None


def _wants_json(request: HttpRequest) -> bool:
    content_type = request.content_type or ""
    if content_type in JSON_TYPES or content_type.endswith("+json"):
        return True
    if sent_by_script(request):
        return True
    return request.get_preferred_type(["text/html", "application/json"]) == "application/json"


def sent_by_script(request: HttpRequest) -> bool:
    """fetch() or XMLHttpRequest, not a page the browser navigates to: ``Sec-Fetch-Mode:
    cors``, or an ``Origin`` on a request that is no navigation (another Sec-Fetch-Mode, or
    none and no HTML asked for). Such a caller reads the answer
    with ``response.json()``, errors included; a browser's own form post says ``navigate``."""
    mode = request.headers.get("Sec-Fetch-Mode", "")
    if mode == "cors":
        return True
    if not request.headers.get("Origin") or mode == "navigate":
        return False
    # No Sec-Fetch-Mode (an older browser, or a script): a page load asks for HTML.
    return bool(mode) or "text/html" not in request.headers.get("Accept", "")
