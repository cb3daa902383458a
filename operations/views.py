"""Probes for load balancers and orchestrators, and the metrics scrape."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from core.errors import default_error, json_error
from operations import metrics as scrape
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


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus text, for the bearer of METRICS_TOKEN only. Without the token set, or with
    another one, it is a 404, so a probe learns nothing of it."""
    token = settings.METRICS_TOKEN
    presented = request.headers.get("Authorization", "")
    if not token or not hmac.compare_digest(presented.encode(), f"Bearer {token}".encode()):
        return json_error(404, *default_error(404))
    body, content_type = scrape.exposition()
    response = HttpResponse(body, content_type=content_type)
    response["Cache-Control"] = "no-store"
    return response
