"""Keeps every ``/api/`` error in the JSON shape, whatever produced it.

DRF views already answer in that shape; this catches what happens outside them: unknown
URLs, Django's CSRF failure page, uncaught exceptions, and Django's own 400/413 answers.
"""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied, RequestDataTooBig, TooManyFieldsSent
from django.db import InterfaceError, OperationalError
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    UnreadablePostError,
)

from core.endpoints import is_public
from core.errors import INCOMPLETE_BODY, database_unavailable, default_error, json_error

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"


def is_api_path(request: HttpRequest) -> bool:
    """Under /api/, or the public endpoint's short path (/f/), which answers as it does."""
    path = request.path
    return (path.startswith(API_PREFIX) and not path.startswith("/api/docs")) or is_public(path)


class ApiErrorMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not is_api_path(request) or response.status_code < 400:
            return response
        if getattr(response, "keeps_own_body", False):
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        replacement = json_error(response.status_code, *default_error(response.status_code))
        for header in ("Retry-After", "Allow", "WWW-Authenticate"):
            if response.has_header(header):
                replacement[header] = response[header]
        return replacement

    def process_exception(self, request: HttpRequest, exception: Exception):
        if not is_api_path(request):
            if isinstance(exception, UnreadablePostError):
                return HttpResponseBadRequest(INCOMPLETE_BODY[1], content_type="text/plain")
            return None
        return exception_response(request, exception)


def exception_response(request: HttpRequest, exception: Exception) -> HttpResponse:
    """An exception a view under /api/ let through, as a JSON error."""
    if isinstance(exception, Http404):
        return json_error(404, *default_error(404))
    if isinstance(exception, PermissionDenied):
        return json_error(403, *default_error(403))
    if isinstance(exception, (RequestDataTooBig, TooManyFieldsSent)):
        return json_error(413, *default_error(413))
    if isinstance(exception, UnreadablePostError):
        return json_error(400, *INCOMPLETE_BODY)
    if isinstance(exception, (OperationalError, InterfaceError)):
        logger.warning("Database unavailable on %s: %s", request.path, exception)
        error = database_unavailable()
        response = json_error(error.status_code, error.code, error.message)
        response["Retry-After"] = error.headers["Retry-After"]
        return response
    logger.exception("Unhandled error on %s", request.path, exc_info=exception)
    return json_error(500, *default_error(500))


class NulInPathMiddleware:
    """No identifier holds U+0000, and PostgreSQL refuses it in a query parameter (a 500): a
    path with one names nothing, so it is a 404 on every database, before any view runs. The
    public endpoint answers its own 404 (form_not_found, in its JSON or HTML shape)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" in request.path and not is_public(request.path):
            raise Http404("No resource has U+0000 in its address.")
        return self.get_response(request)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """Django's CSRF failure view: JSON for the API, a plain page elsewhere."""
    if is_api_path(request):
        return json_error(
            403, "csrf_failed", "CSRF verification failed. Send the X-CSRFToken header."
        )
    return HttpResponse("CSRF verification failed. Reload the page and try again.", status=403)


class ContentSecurityPolicyMiddleware:
    """A Content-Security-Policy on the pages people sign in to (the dashboard and the admin):
    scripts only from this server's own files, no plugins, no framing, forms posting only here
    (and to the Google consent screen the Sheets connection goes through). Inline styles stay
    allowed: the pages use a few style attributes, and styles cannot run code."""

    PATHS = ("/dashboard/", "/admin/")

    def __init__(self, get_response) -> None:
        from django.conf import settings

        self.get_response = get_response
        self.policy = "; ".join(
            [
                "default-src 'self'",
                "script-src 'self'",
                "style-src 'self' 'unsafe-inline'",
                "img-src 'self' data:",
                "object-src 'none'",
                "base-uri 'self'",
                "frame-ancestors 'none'",
                f"form-action 'self' {_origin(settings.GOOGLE_OAUTH_AUTH_URI)}",
            ]
        )

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.path.startswith(self.PATHS):
            response.setdefault("Content-Security-Policy", self.policy)
        return response


class NoStoreMiddleware:
    """``Cache-Control: no-store`` on every answer that may carry submission data or a secret:
    the API (new keys, signing secrets, submissions, pull pages and streams, exports), the
    dashboard's pages and the admin. One rule here, so no view can forget it. Only the public
    API description stays cacheable."""

    PATHS = ("/api/", "/dashboard/", "/admin/")
    CACHEABLE = ("/api/schema/", "/api/docs/")

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        path = request.path
        # A view's own no-store stays (a download's "private, no-store").
        own = "no-store" in response.get("Cache-Control", "")
        private = path.startswith(self.PATHS) or is_public(path)
        if private and not path.startswith(self.CACHEABLE) and not own:
            response["Cache-Control"] = "no-store"
        return response


def _origin(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
