"""Probes for load balancers and orchestrators, and the metrics scrape."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from operations import readiness


@require_GET
def healthz(_request: HttpRequest) -> JsonResponse:
    """Liveness: the process answers. No dependency is checked, so a database outage never
    makes an orchestrator restart every web process at once."""
    return JsonResponse({"status": "ok"})


@require_GET
def readyz(_request: HttpRequest) -> HttpResponse:
    body = readiness.report()
    return JsonResponse(body, status=200 if body["status"] == "ok" else 503)
