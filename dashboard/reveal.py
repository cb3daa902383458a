"""A secret shown once, on the page a create redirects to.

Every dashboard write answers with a redirect (post/redirect/get), so a reload never sends it
again. A new API key or signing secret must still reach the page after the redirect, and be
kept nowhere on the server: it travels in a short-lived cookie, encrypted with the field keys
and bound to the owner, which the page that shows it reads and expires in the same answer.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from core.crypto import InvalidToken, fernet

COOKIE = "ff_reveal"
LIFETIME = 300  # seconds: the redirect is followed at once


def _path() -> str:
    return reverse("dashboard:home")


def reveal_once(response: HttpResponse, user_id, **values: str) -> HttpResponse:
    """Carries ``values`` to the next page the owner opens under the dashboard."""
    payload = json.dumps({"user": str(user_id), "values": values}).encode()
    response.set_cookie(
        COOKIE, fernet().encrypt(payload).decode(), max_age=LIFETIME, httponly=True,
        secure=settings.AUTH_COOKIE_SECURE, samesite="Strict", path=_path(),
    )
    return response


def revealed(request: HttpRequest) -> dict[str, str]:
    """The values carried to this page for this owner; {} if none, stale or someone else's."""
    raw = request.COOKIES.get(COOKIE)
    if not raw:
        return {}
    try:
        payload = json.loads(fernet().decrypt(raw.encode(), ttl=LIFETIME))
    except (InvalidToken, ValueError):
        return {}
    if payload.get("user") != str(request.user.pk):
        return {}
    return {str(name): str(value) for name, value in payload.get("values", {}).items()}


def shown(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """Expires the cookie once a page has read it: a reload shows the secret no more."""
    if COOKIE in request.COOKIES:
        response.delete_cookie(COOKIE, path=_path(), samesite="Strict")
    return response
