"""What this browser deleted, so Back to a deleted submission's page says so instead of "Page
not found": the last few ids, in a signed cookie of the dashboard's own (nothing is kept of
a deleted submission on the server)."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

COOKIE = "ff_deleted"
SALT = "formflow.dashboard.deleted"
KEPT = 50  # ids; about 1.9 KB, well inside a cookie
DAY = 24 * 3600


def _ids(request: HttpRequest) -> list[str]:
    raw = request.get_signed_cookie(COOKIE, default="", salt=SALT, max_age=DAY) or ""
    return [ident for ident in raw.split(",") if ident]


def remember(request: HttpRequest, response: HttpResponse, ids: Iterable) -> None:
    fresh = [str(ident) for ident in ids]
    kept = list(dict.fromkeys([*fresh, *_ids(request)]))[:KEPT]
    response.set_signed_cookie(COOKIE, ",".join(kept), salt=SALT, max_age=DAY,
                               path=reverse("dashboard:home"), httponly=True, samesite="Lax",
                               secure=settings.SESSION_COOKIE_SECURE)


def was_deleted(request: HttpRequest, submission_id) -> bool:
    return str(submission_id) in _ids(request)
