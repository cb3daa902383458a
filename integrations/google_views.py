"""``/api/auth/google/login`` and ``/callback``: Google access for the Sheets integration only."""

from __future__ import annotations

import secrets
from urllib.parse import urlencode

from django.core import signing
from django.core.cache import cache
from django.http import HttpResponseRedirect
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.views import APIView

from accounts.authentication import signed_in
from core.api.schema import error
from core.errors import ServiceError
from integrations import selectors, services, sheet_columns
from integrations.clients import google

STATE_SALT = "formflow.google.oauth-state"
STATE_MAX_AGE = 600


def verifier_key(nonce: str) -> str:
    return f"google-oauth:verifier:{nonce}"


def landing(**params: str) -> HttpResponseRedirect:
    return HttpResponseRedirect(f"{reverse('dashboard:integrations')}?{urlencode(params)}")


class GoogleLoginView(APIView):
    @extend_schema(
        summary="Start connecting Google Sheets (redirects to Google's consent screen)",
        parameters=[OpenApiParameter("formId", str, description="limit the sheet to one form")],
        responses={
            302: OpenApiResponse(description="Redirect to the consent screen"),
            404: error("form_not_found: no form of yours has that id"),
            503: error("google_not_configured: the server has no Google OAuth client"),
        },
    )
    def get(self, request: Request) -> HttpResponseRedirect:
        services.raise_if_not_configured()
        form = selectors.sheets_form(signed_in(request), request.query_params.get("formId"))
        nonce = secrets.token_urlsafe(16)
        state = signing.dumps(
            {"u": str(request.user.pk), "f": str(form.pk) if form else None, "n": nonce},
            salt=STATE_SALT,
        )
        url, verifier = google.consent_url(state)
        cache.set(verifier_key(nonce), verifier, STATE_MAX_AGE)
        return HttpResponseRedirect(url)


class GoogleCallbackView(APIView):
    """Only a browser comes here, back from Google: every outcome lands on the integrations
    page, with a message, never on a bare JSON error."""

    permission_classes = [AllowAny]

    @extend_schema(
        summary="Google's redirect after consent: stores the grant and creates the sheet",
        responses={
            302: OpenApiResponse(description="Redirect to the dashboard's integrations page"),
            503: error("google_not_configured: the server has no Google OAuth client"),
        },
    )
    def get(self, request: Request) -> HttpResponseRedirect:
        services.raise_if_not_configured()
        query = request.query_params
        try:
            state = signing.loads(query.get("state", ""), salt=STATE_SALT, max_age=STATE_MAX_AGE)
        except signing.BadSignature:
            return landing(error="invalid_state")
        if request.user is None or state.get("u") != str(request.user.pk):
            return landing(error="wrong_account")
        verifier = cache.get(verifier_key(state["n"]))
        cache.delete(verifier_key(state["n"]))  # a state works once
        if "error" in query:
            return landing(error=query["error"][:100])
        if verifier is None or "code" not in query:
            return landing(error="invalid_state")
        try:
            # Asked again: the role may have gone while the user was at Google's, and a
            # sheet meant for one form must not quietly receive every form instead.
            form = selectors.sheets_form(signed_in(request), state["f"])
        except ServiceError:
            return landing(error="form_not_found")
        try:
            tokens = google.exchange_code(
                code=query["code"], state=query["state"], code_verifier=verifier
            )
            creds = google.credentials(tokens)
            title = f"FormFlow: {form.name}" if form else "FormFlow submissions"
            spreadsheet = google.Sheets(creds).create_spreadsheet(
                title=title, header=sheet_columns.FIXED)
        except google.GoogleError as error:
            return landing(error="google_failed", message=str(error)[:200])
        integration = services.sheets_integration_create(
            owner=signed_in(request),
            form=form,
            tokens=google.Tokens.from_credentials(creds).as_dict(),
            spreadsheet=spreadsheet,
            actor=signed_in(request),
        )
        return landing(connected=str(integration.pk))
