"""How the public endpoint answers: JSON or HTML by the contract's rule, always with CORS, and
in JSON with Formspree's keys beside the contract's (formspree.py)."""

from __future__ import annotations

import uuid
from functools import lru_cache

from django.conf import settings
from django.http import HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.loader import render_to_string
from django.urls import get_script_prefix, reverse

from core.errors import ServiceError
from forms_app.models import Form
from submissions.intake import formspree
from submissions.intake.control_fields import safe_redirect
from submissions.intake.pipeline import origin_allowed
from submissions.intake.rules import FieldsRefused
from submissions.intake.visit import Visit

SUCCESS_MESSAGE = "Thanks! Your submission was received."
PREFLIGHT_HEADERS = ", ".join(("Content-Type", "Accept", *formspree.CLIENT_HEADERS))


@lru_cache(maxsize=16)
def _thanks_at(script_prefix: str) -> str:
    return reverse("thanks")  # under the same prefix, the key


def thanks_path() -> str:
    """The thank-you page's path. reverse() costs a few per cent of a submission, and every
    JSON answer now names the page (``next``), so it is resolved once per script prefix."""
    return _thanks_at(get_script_prefix())


class Responder:
    def __init__(self, visit: Visit, form: Form | None) -> None:
        self.visit = visit
        self.form = form
        self.json = visit.wants_json

    def cors(self, response: HttpResponse) -> HttpResponse:
        response["Vary"] = "Origin"
        sent = self.visit.origin_header
        if sent and (self.form is None or origin_allowed(self.form, self.visit.origin)):
            response["Access-Control-Allow-Origin"] = sent
            response["Access-Control-Expose-Headers"] = "Retry-After"
        return response

    def preflight(self, requested_headers: str) -> HttpResponse:
        response = HttpResponse(status=204)
        response["Access-Control-Allow-Methods"] = "POST, OPTIONS"
        response["Access-Control-Allow-Headers"] = requested_headers or PREFLIGHT_HEADERS
        response["Access-Control-Max-Age"] = "86400"
        return self.cors(response)

    def success(self, submission_id: uuid.UUID, requested_redirect: str | None = None
                ) -> HttpResponse:
        """``requested_redirect``: where the page asked the browser to go (``_next`` and
        the like), followed only when control_fields.safe_redirect allows it."""
        target = self.next_url(requested_redirect)
        if self.json:
            absolute = target if target.startswith(("https://", "http://")) else (
                settings.BASE_URL + target)
            body = {"success": True, "message": SUCCESS_MESSAGE, "id": str(submission_id),
                    "ok": True, "next": absolute}
            return self.cors(JsonResponse(body))
        return self.cors(HttpResponseRedirect(target, status=303))

    def next_url(self, requested: str | None) -> str:
        """Where a browser is sent after a stored post: the page's safe choice, else the
        form's redirectUrl, else the thank-you page."""
        if self.form is None:
            return thanks_path()
        chosen = safe_redirect(requested, self.visit.origin, self.form)
        return chosen or self.form.redirect_url or thanks_path()

    def error(self, error: ServiceError) -> HttpResponse:
        if self.json:
            body = {"success": False, "error": error.code, "message": error.message}
            if error.details is not None:
                body["details"] = error.details
            if isinstance(error, FieldsRefused):
                body["errors"] = error.errors
            body.setdefault("errors", formspree.errors(error))  # never one the answer has
            response: HttpResponse = JsonResponse(body, status=error.status_code)
        else:
            problems = error.problems if isinstance(error, FieldsRefused) else []
            html = render_to_string("submissions/error.html", {
                "message": error.message, "status": error.status_code, "problems": problems})
            response = HttpResponse(html, status=error.status_code)
            # An HTML form post gets a page, not JSON (core/api/middleware.py reads the mark).
            response.keeps_own_body = True  # type: ignore[attr-defined]
        for name, value in error.headers.items():
            response[name] = value
        return self.cors(response)
