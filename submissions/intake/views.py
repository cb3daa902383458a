from __future__ import annotations

from dataclasses import replace

from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.views import APIView

from core import metrics
from core.errors import ServiceError, database_unavailable, default_error, json_error
from forms_app import form_cache
from forms_app.models import Form
from forms_app.selectors import public_form
from submissions.intake import control_fields, payload, pipeline
from submissions.intake.responders import Responder
from submissions.intake.visit import Visit


def _answered_as(visit: Visit, request: HttpRequest) -> Visit:
    """A body that turned out to be JSON (text/plain holding an object) is answered in JSON."""
    if getattr(request, "body_is_json", False) and not visit.wants_json:
        return replace(visit, wants_json=True)
    return visit


SubmitResult = inline_serializer(
    "SubmitResult",
    {
        "success": serializers.BooleanField(),
        "message": serializers.CharField(),
        "id": serializers.UUIDField(help_text="The stored submission's id"),
        # Formspree's keys, so its JavaScript clients read the answer (intake/formspree.py).
        "ok": serializers.BooleanField(help_text="Always true (Formspree's success flag)"),
        "next": serializers.URLField(help_text=(
            "Where a browser is sent after an HTML post: a _next (or _redirect, redirect, "
            "redirectTo) on the posting page's origin, the form's redirectUrl or an allowed "
            "origin; else the form's redirectUrl; else the thank-you page")),
    },
)


def serve(request: HttpRequest, slug: str) -> HttpResponse:
    """``/api/v1/f/{slug}`` and ``/f/{slug}``, every method: called by the endpoint's one
    door, submissions/intake/middleware.py."""
    if request.method == "POST":
        return submit(request, slug)
    if request.method == "OPTIONS":
        return preflight(request, slug)
    response = json_error(405, *default_error(405))
    response["Allow"] = "POST, OPTIONS"
    return response


def preflight(request: HttpRequest, slug: str) -> HttpResponse:
    # From the database: no admission round trip checks a kept form here.
    requested = request.headers.get("Access-Control-Request-Headers", "")
    return Responder(Visit.of(request), public_form(slug)).preflight(requested)


def submit(request: HttpRequest, slug: str) -> HttpResponse:
    visit = Visit.of(request)
    body = pipeline.Body(lambda: payload.read_fields(request, body.receive_files(form)))
    form = None
    try:
        form = form_cache.form_at(slug)
        if form is None:
            raise pipeline.form_not_found()
        submission_id, form = pipeline.accept(visit, slug, form, body)
    except ServiceError as error:
        _count_refusal(error)
        return Responder(_answered_as(visit, request), form).error(error)
    except (OperationalError, InterfaceError):
        # Nothing was stored (the reservation is given back): the visitor may send again.
        metrics.submission("unavailable")
        return Responder(visit, form).error(database_unavailable())
    except IntegrityError:
        # The form was deleted while the submission was being stored: its foreign key.
        if form is None or Form.objects.filter(pk=form.pk).exists():
            raise
        return Responder(visit, None).error(pipeline.form_not_found())
    finally:
        body.close()  # temporary files of uploads, stored or not
    # The fields were read for the checks (and kept): asking again costs nothing.
    requested = control_fields.requested_redirect(body())
    return Responder(_answered_as(visit, request), form).success(submission_id, requested)


# What a refusal is counted as (formflow_submissions_total); by status where the code is one
# of several of that kind (every 413 is too large, every 503 a store that was away).
_REFUSALS_BY_CODE = {
    "origin_not_allowed": "origin",
    "rate_limited": "rate_limited",
    "monthly_limit_reached": "over_limit",
    "captcha_failed": "captcha",
}
_REFUSALS_BY_STATUS = {413: "too_large", 503: "unavailable"}


def _count_refusal(error: ServiceError) -> None:
    """A post to an address with no form is no form's submission: it is counted with the
    other requests only (formflow_http_requests_total, status 404)."""
    if error.code == "form_not_found":
        return
    outcome = _REFUSALS_BY_CODE.get(error.code) or _REFUSALS_BY_STATUS.get(error.status_code)
    metrics.submission(outcome or "invalid")


class SubmitView(APIView):
    """The endpoint's description, for the OpenAPI schema and ``reverse("submit")``: the URL
    pattern in submissions/urls.py names this class, but never serves. Requests are served by
    PublicEndpointMiddleware (submissions/intake/middleware.py), the one door, before URL
    resolution; they skip DRF's machinery (request wrapping, content negotiation,
    authentication, permission and throttle hooks): none of it applies to an anonymous
    endpoint that reads its own body, and it cost more CPU than storing the submission."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    answers_html = True  # a browser's form post gets its errors as a page (core/api/schema.py)

    @extend_schema(
        summary="Submit a form",
        description=(
            "Any named fields as JSON, application/x-www-form-urlencoded or multipart/form-data."
            " JSON clients get 200 {success, message, id, ok, next}; HTML form posts get a 303"
            " redirect. Every JSON error also carries Formspree's errors: [{code, message,"
            " field?}]. Served at /f/{slug} too, so a page written for a hosted form service"
            " changes only its host."
        ),
        # At least one field: a body with none is refused (400 empty_submission). JSON values
        # may be any JSON; a form post's are text (a file part is kept as a note of its name
        # and size, never its content).
        request={
            "application/json": {
                "type": "object", "additionalProperties": True, "minProperties": 1},
            **{media: {"type": "object", "additionalProperties": {"type": "string"},
                       "minProperties": 1}
               for media in ("application/x-www-form-urlencoded", "multipart/form-data")},
        },
        parameters=[
            OpenApiParameter(
                "Idempotency-Key", str, OpenApiParameter.HEADER, required=False,
                pattern="^[!-~]([ -~]{0,253}[!-~])?$",
                description=(
                    "1 to 255 printable ASCII characters. The same key for the same form "
                    "within 24 h answers what the first request answered and stores nothing "
                    "more. A request that fails gives its key back."
                ),
            ),
        ],
        responses={
            200: SubmitResult,
            303: OpenApiResponse(description="Stored; redirect for HTML form posts"),
            400: OpenApiResponse(
                description="Malformed body, no fields, or an invalid Idempotency-Key"
            ),
            409: OpenApiResponse(
                description="A request with this Idempotency-Key is still running; see "
                "Retry-After"
            ),
            403: OpenApiResponse(description="Origin not allowed, or monthly limit reached"),
            404: OpenApiResponse(description="Unknown form"),
            413: OpenApiResponse(description=(
                "Body over 10 MiB (with fileUploads: maxBytes x maxFiles + 1 MiB) or over 200 "
                "fields; a file over maxBytes, more than maxFiles, or past the storage quota")),
            415: OpenApiResponse(description=(
                "Not JSON, urlencoded or multipart; or a file of a type fileUploads refuses")),
            422: OpenApiResponse(description=(
                "CAPTCHA verification failed; or the fields break the form's field rules "
                "(invalid_fields: details by field, and errors: [{field, code, message}] with "
                "REQUIRED_FIELD_MISSING, REQUIRED_FIELD_EMPTY, TYPE_EMAIL, TYPE_NUMERIC, "
                "TYPE_TEXT, UNEXPECTED_FIELD or UNSPECIFIED)")),
            429: OpenApiResponse(description="Rate limit exceeded; see Retry-After"),
        },
        auth=[],
    )
    def post(self, request: Request, slug: str) -> HttpResponse:
        raise ImproperlyConfigured(NOT_THE_DOOR)

    @extend_schema(exclude=True)
    def options(self, request: Request, slug: str) -> HttpResponse:  # type: ignore[override]
        raise ImproperlyConfigured(NOT_THE_DOOR)


@extend_schema_view(post=extend_schema(operation_id="f_short_create"))
class ShortSubmitView(SubmitView):
    """``/f/{slug}``, the same endpoint at a hosted form service's path: described again under
    its own operation id, so generated clients get a function of its own."""


NOT_THE_DOOR = ("/api/v1/f/{slug} and /f/{slug} are served by "
                "submissions.intake.middleware.PublicEndpointMiddleware: it must be in MIDDLEWARE")


def thanks(request) -> HttpResponse:
    return render(request, "submissions/thanks.html")
