"""What the dashboard's pages share: errors in words, and forms bound and shown again."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework import serializers

from core.errors import ServiceError, flatten_details
from dashboard.naming import field_label


def error_text(error: ServiceError | serializers.ValidationError) -> str:
    """What went wrong, each field named as the pages label it (never the API's name)."""
    if isinstance(error, serializers.ValidationError):
        details = flatten_details(error.detail)
    elif error.details:
        details = error.details
    else:
        return error.message
    return "; ".join(text if field == "non_field_errors" else f"{field_label(field)}: {text}"
                     for field, text in details.items())


def error_page(
    request: HttpRequest, template: str, context: dict[str, Any], error: ServiceError
) -> HttpResponse:
    """The page again, with the error's status and headers (Retry-After past a limit)."""
    response = render(request, template, context, status=error.status_code)
    for name, value in error.headers.items():
        response[name] = value
    return response


def first_errors(form) -> dict[str, str]:
    """A Django form's errors, one message a field, in the shape the API's errors have."""
    return {name: str(errors[0]) for name, errors in form.errors.items()}


def validated(serializer_class, data: dict[str, Any], partial: bool = False) -> dict[str, Any]:
    serializer = serializer_class(data=data, partial=partial)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def bound(form_class, request: HttpRequest, **initial: Any):
    """The page's form: bound to what was posted, or empty with ``initial``."""
    if request.method == "POST":
        return form_class(request.POST)
    return form_class(initial=initial)


def form_page(request: HttpRequest, template: str, context: dict[str, Any]) -> HttpResponse:
    """The page again, with what was wrong by each field (400 after a post)."""
    status = 400 if context["form"].errors else 200
    return render(request, template, context, status=status)
