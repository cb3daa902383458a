"""How the public endpoint answers: JSON or HTML by the contract's rule, always with CORS."""

from __future__ import annotations

import uuid

from django.http import HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.loader import render_to_string
from django.urls import reverse

from core.errors import ServiceError
from forms_app.models import Form
from submissions.intake.pipeline import origin_allowed
from submissions.intake.rules import FieldsRefused
from submissions.intake.visit import Visit

SUCCESS_MESSAGE = "Thanks! Your submission was received."


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
        response["Access-Control-Allow-Headers"] = requested_headers or "Content-Type, Accept"
        response["Access-Control-Max-Age"] = "86400"
        return self.cors(response)

    def success(self, submission_id: uuid.UUID) -> HttpResponse:
        if self.json:
            body = {"success": True, "message": SUCCESS_MESSAGE, "id": str(submission_id)}
            return self.cors(JsonResponse(body))
        target = (self.form and self.form.redirect_url) or reverse("thanks")
        return self.cors(HttpResponseRedirect(target, status=303))

    def error(self, error: ServiceError) -> HttpResponse:
        if self.json:
            body = {"success": False, "error": error.code, "message": error.message}
            if error.details is not None:
                body["details"] = error.details
            if isinstance(error, FieldsRefused):
                body["errors"] = error.errors
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
