"""The public endpoint's own door through the middleware stack."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from core.api.middleware import exception_response
from submissions.views import SubmitView


class PublicEndpointMiddleware:
    """Serves ``/api/v1/f/{slug}`` straight away, past the middleware below it and URL
    resolution, none of which that endpoint uses: it has no session, no user, no CSRF (anyone's
    site posts to it), no messages. They cost a tenth of a submission's CPU under load.

    The middleware above it still applies: security headers, JSON errors under /api/, the NUL
    check. The URL pattern in submissions/urls.py stays, for reverse() and the schema; this
    matches exactly what it matches (``<str:slug>``: one non-empty segment)."""

    PREFIX = "/api/v1/f/"

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        self.view = SubmitView.as_view()

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if path.startswith(self.PREFIX):
            slug = path[len(self.PREFIX) :]
            if slug and "/" not in slug:
                response: HttpResponse
                try:
                    response = self.view(request, slug=slug)
                except Exception as error:  # as ApiErrorMiddleware.process_exception would
                    response = exception_response(request, error)
                response.setdefault("X-Frame-Options", "DENY")
                # As CommonMiddleware would: a length, not a chunked answer.
                response.setdefault("Content-Length", str(len(response.content)))
                return response
        return self.get_response(request)
