"""Probes for load balancers and orchestrators, the installation's status, and the metrics
scrape (contract, "Operations"; docs/operating.md)."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from core.errors import default_error, json_error
from operations import metrics as scrape
from operations import readiness, status


@require_GET
def healthz(_request: HttpRequest) -> JsonResponse:
    """Liveness: the process answers. No dependency is checked, so a database outage never
    makes an orchestrator restart every web process at once."""
    return JsonResponse({"status": "ok"})


@require_GET
def readyz(_request: HttpRequest) -> HttpResponse:
    return _answer(readiness.report())


@require_GET
def installation_status(request: HttpRequest) -> HttpResponse:
    if not _bearer_of_the_metrics_token(request):
        return json_error(404, *default_error(404))
    return _answer(status.report())


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    if not _bearer_of_the_metrics_token(request):
        return json_error(404, *default_error(404))
    body, content_type = scrape.exposition()
    response = HttpResponse(body, content_type=content_type)
    response["Cache-Control"] = "no-store"
    return response


def _bearer_of_the_metrics_token(request: HttpRequest) -> bool:
    """Without METRICS_TOKEN set, or with another token, /metrics and /status are a 404, so
    a probe learns nothing of them. Compared in constant time."""
    token = settings.METRICS_TOKEN
    presented = request.headers.get("Authorization", "")
    return bool(token) and hmac.compare_digest(presented.encode(), f"Bearer {token}".encode())


def _answer(body: dict) -> JsonResponse:
    response = JsonResponse(body, status=200 if body["status"] == "ok" else 503)
    response["Cache-Control"] = "no-store"
    return response
