"""The public endpoint's one door: ``/api/v1/f/{slug}`` and ``/f/{slug}`` (core/endpoints.py)
are served here, in the middleware stack, and nowhere else."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import ResolverMatch

from core.api.middleware import exception_response
from core.endpoints import public_slug
from submissions.intake.views import SubmitView, serve

SUBMIT_VIEW = SubmitView.as_view()


class PublicEndpointMiddleware:
    """Serves ``/api/v1/f/{slug}`` straight away, past the middleware below it and URL
    resolution, none of which that endpoint uses: it has no session, no user, no CSRF (anyone's
    site posts to it), no messages. They cost a tenth of a submission's CPU under load.

    The middleware above it still applies: security headers, JSON errors under /api/, the NUL
    check. The URL pattern in submissions/urls.py stays, for reverse() and the schema, and
    never serves (intake/views.py, SubmitView); this matches exactly what it matches
    (``<str:slug>``: one non-empty segment)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        slug = public_slug(request.path_info)
        if slug is None:
            return self.get_response(request)
        # What URL resolution would have said, for the middleware above that counts requests
        # by route (operations/middleware.py), without its cost: both paths are one route.
        request.resolver_match = ResolverMatch(
            SUBMIT_VIEW, (), {"slug": slug}, url_name="submit", route="api/v1/f/<str:slug>")
        response: HttpResponse
        try:
            response = serve(request, slug)
        except Exception as error:  # as ApiErrorMiddleware.process_exception would
            response = exception_response(request, error)
        response.setdefault("X-Frame-Options", "DENY")
        # As CommonMiddleware would: a length, not a chunked answer.
        response.setdefault("Content-Length", str(len(response.content)))
        return response
