"""One error shape for every API response: ``{"error", "message", "details"?}``."""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig, TooManyFieldsSent
from django.db import InterfaceError, OperationalError
from django.http import Http404, JsonResponse, UnreadablePostError
from rest_framework import exceptions, status
from rest_framework.response import Response

logger = logging.getLogger(__name__)


class ServiceError(Exception):
    """The one domain error type: services raise it, the API turns it into JSON."""

    def __init__(
        self,
        code: str,
        message: str,
        status_code: int = 400,
        details: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status_code = status_code
        self.details = details
        self.headers = headers or {}


def invalid(details: dict[str, str]) -> ServiceError:
    """A 400 naming each field that is not valid."""
    return ServiceError("validation_error", "Some fields are not valid.", details=details)


def forbidden(message: str) -> ServiceError:
    """A 403: the caller has a role here, too low for this."""
    return ServiceError("forbidden", message, status_code=403)


def retry_later(code: str, message: str, retry_after: int) -> ServiceError:
    """A 429 that says when to come back."""
    return ServiceError(code, message, status_code=429, headers={"Retry-After": str(retry_after)})


DATABASE_RETRY_AFTER_SECONDS = 5


def database_unavailable() -> ServiceError:
    """The database could not be reached or gave up on the request: a 503 that says when to
    try again, not a 500. Django drops a broken connection at the end of the request, so the
    next one reconnects by itself once the database is back."""
    return ServiceError(
        "service_unavailable",
        "The service is briefly unavailable. Please try again shortly.",
        status_code=503,
        headers={"Retry-After": str(DATABASE_RETRY_AFTER_SECONDS)},
    )


def error_body(code: str, message: str, details: dict[str, str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"error": code, "message": message}
    if details is not None:
        body["details"] = details
    return body


def json_error(
    status_code: int, code: str, message: str, details: dict[str, str] | None = None
) -> JsonResponse:
    return JsonResponse(error_body(code, message, details), status=status_code)


DEFAULT_CODES = {
    400: ("bad_request", "The request is not valid."),
    401: ("not_authenticated", "Authentication credentials were not provided or are invalid."),
    403: ("forbidden", "You do not have permission to perform this action."),
    404: ("not_found", "The requested resource was not found."),
    405: ("method_not_allowed", "This method is not allowed on this resource."),
    406: ("not_acceptable", "The requested response format is not available."),
    413: ("payload_too_large", "The request body is too large."),
    415: ("unsupported_media_type", "The request content type is not supported."),
    429: ("rate_limited", "Too many requests. Try again later."),
    500: ("server_error", "Something went wrong on our side. Please try again."),
}


INCOMPLETE_BODY = ("incomplete_body", "The request body ended before its Content-Length.")


def default_error(status_code: int) -> tuple[str, str]:
    return DEFAULT_CODES.get(status_code, ("error", "The request could not be completed."))


def flatten_details(detail: Any, prefix: str = "", in_list: bool = False) -> dict[str, str]:
    """Turn DRF's nested validation detail into ``{"field": "first message"}``, keyed by the
    name the client sent: an object's fields dotted (``config.url``), and every problem inside
    a list under the list's name (``allowedOrigins``), whether DRF keyed it by index or not."""
    if isinstance(detail, dict):
        flat: dict[str, str] = {}
        for key, value in detail.items():
            # ListField keys its elements' errors by position: the list's own name.
            element = in_list or (bool(prefix) and isinstance(key, int))
            name = prefix if element else (f"{prefix}.{key}" if prefix else str(key))
            for field, message in flatten_details(value, name, element).items():
                flat.setdefault(field, message)
        return flat
    if isinstance(detail, list):
        flat = {}
        nested = any(isinstance(item, (dict, list)) for item in detail)
        for item in detail:
            for field, message in flatten_details(item, prefix, in_list or nested).items():
                flat.setdefault(field, message)
        return flat
    return {prefix or "non_field_errors": str(detail)}


def _drf_response(exc: exceptions.APIException) -> Response:
    status_code = exc.status_code
    code, message = default_error(status_code)
    details = None
    if isinstance(exc, exceptions.ValidationError):
        code, message = "validation_error", "Some fields are not valid."
        details = flatten_details(exc.detail)
    elif isinstance(exc, exceptions.ParseError):
        code, message = "malformed_body", f"The request body could not be parsed: {exc.detail}"
    elif isinstance(exc, exceptions.UnsupportedMediaType):
        message = "Send the request body as application/json."
    elif isinstance(exc.detail, str):
        message = str(exc.detail)
    if isinstance(exc, exceptions.AuthenticationFailed):
        code = "authentication_failed"
    headers = {}
    auth_header = getattr(exc, "auth_header", None)
    if auth_header:
        headers["WWW-Authenticate"] = auth_header
    wait = getattr(exc, "wait", None)
    if wait is not None:
        headers["Retry-After"] = str(int(wait))
    return Response(error_body(code, message, details), status=status_code, headers=headers)


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, (OperationalError, InterfaceError)):
        exc = database_unavailable()
    if isinstance(exc, ServiceError):
        body = error_body(exc.code, exc.message, exc.details)
        return Response(body, status=exc.status_code, headers=exc.headers)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, UnreadablePostError):
        return Response(error_body(*INCOMPLETE_BODY), status=status.HTTP_400_BAD_REQUEST)
    elif isinstance(exc, (RequestDataTooBig, TooManyFieldsSent)):
        return Response(
            error_body("payload_too_large", "The request body is too large."),
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, exceptions.APIException):
        return _drf_response(exc)
    logger.exception("Unhandled error in API view", exc_info=exc)
    code, message = default_error(500)
    return Response(error_body(code, message), status=500)
