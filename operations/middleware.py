"""Counts and times every request by its route (formflow_http_requests_total,
formflow_http_request_duration_seconds). First in MIDDLEWARE, so the time covers every other
middleware, the public endpoint's door included."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

from core import metrics

# Any other method a client invents is counted as "other": labels stay a short, fixed list.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"
STATIC = "static"


def route_of(request: HttpRequest) -> str:
    """The URL pattern's name (with its namespace), never the raw path, whose slugs and ids
    would make a series per form. The public endpoint's door names its match itself
    (submissions/intake/middleware.py); static files and paths no pattern matches are answered
    before URL resolution, so their path is resolved here."""
    match = request.resolver_match
    if match is None:
        if request.path_info.startswith(settings.STATIC_URL):
            return STATIC
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return UNMATCHED
    return match.view_name


class RequestMetricsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        began = time.perf_counter()
        response = self.get_response(request)
        method = request.method if request.method in METHODS else "other"
        metrics.request(route_of(request), method or "other", response.status_code,
                        time.perf_counter() - began)
        return response
