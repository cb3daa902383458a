"""The integrations page: a card to add each kind, and each integration's switches. It
shows what the integrations API lists to the caller (their own, and those of their teams'
forms, secrets never shown) and offers every form they may add one to; the switches only
where their role on the form allows (editor), as the API's."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.template import RequestContext
from django.views.decorators.http import require_POST
from rest_framework import serializers

from accounts.authentication import signed_in
from core.errors import ServiceError
from dashboard.auth import login_required
from dashboard.naming import shown_error
from dashboard.reveal import reveal_once, revealed, shown
from dashboard.views.common import error_text, first_errors
from forms_app import selectors as form_selectors
from integrations import kinds
from integrations import selectors as integration_selectors
from integrations import services as integrations
from integrations.clients import google
from integrations.delivery import retry
from integrations.models import Integration
from integrations.naming import destination
from integrations.serializers import public_config
from teams.roles import Role


def _integrations_page(request: HttpRequest, status: int = 200, typed: QueryDict | None = None,
                       **extra: Any) -> HttpResponse:
    """The integrations and a card to add each kind; ``typed`` is a create that failed, whose
    card is filled again with what was typed."""
    user = signed_in(request)
    rows = integration_selectors.page_rows(user)
    managed = integration_selectors.managed_by(user)
    forms_list = list(form_selectors.forms_with_role(user, Role.EDITOR))
    cards = [
        kind.card.render(RequestContext(request, {
            "forms": forms_list, "google_configured": google.configured(),
            "typed": _typed_into(kind, typed),
        }))
        for kind in kinds.KINDS.values() if kind.card is not None
    ]
    context = {
        "integrations": [
            (row, public_config(row), kinds.get(row.type), destination(row), row.pk in managed)
            for row in rows
        ],
        "forms": forms_list,
        "cards": cards,
        "section": "integrations",
        **extra,
    }
    if request.GET.get("connected"):
        messages.success(request, "Google Sheets is connected.")
    if request.GET.get("error"):
        messages.error(request, f"Google Sheets was not connected ({request.GET['error']}).")
    return render(request, "dashboard/integrations.html", context, status=status)


def _typed_into(kind: kinds.Kind, typed: QueryDict | None) -> dict[str, Any]:
    """What was typed into this kind's card, each list (the events) whole. Its secrets are
    typed again, as a password input is never filled in by the page (the settings' too)."""
    if typed is None or typed.get("type") != kind.type:
        return {}
    return {name: values if name == "events" else values[-1]
            for name, values in typed.lists()
            if name not in kind.secret_keys and name != "csrfmiddlewaretoken"}


@login_required
def integrations_page(request: HttpRequest) -> HttpResponse:
    return shown(request, _integrations_page(request, new_secret=revealed(request).get("secret")))


def _integration_config(post) -> dict[str, Any]:
    """The card's config through its kind's form; the service checks it as the API's."""
    kind = kinds.KINDS.get(post.get("type", ""))
    if kind is None or kind.form is None:
        return {}
    posted = kind.form(post)
    if not posted.is_valid():
        raise serializers.ValidationError(first_errors(posted))
    return posted.config()


@login_required
@require_POST
def integration_create(request: HttpRequest) -> HttpResponse:
    try:
        integration = integrations.integration_create(
            owner=signed_in(request),
            type=request.POST.get("type", ""),
            config=_integration_config(request.POST),
            form_id=request.POST.get("formId") or None,
            actor=signed_in(request),
        )
    except (ServiceError, serializers.ValidationError) as error:
        # The API's status: 403 for a form one only views, 400 for one one has no role on.
        status = error.status_code if isinstance(error, ServiceError) else 400
        messages.error(request, f"Integration not created. {error_text(error)}")
        return _integrations_page(request, status=status, typed=request.POST)
    messages.success(request, f"{destination(integration)}: integration created.")
    response = redirect("dashboard:integrations")
    secret = integration.secrets.get("signingSecret")
    if secret:
        # Shown once, on the page the redirect lands on, and kept nowhere else.
        reveal_once(response, request.user.pk, secret=secret)
    return response


def _managed_integration(request: HttpRequest, integration_id: str) -> Integration:
    """One the caller may manage now, as the integrations API asks: one they cannot see is
    404; one of a form they only view, the 403 page. So a member removed or demoted keeps no
    hold on a team form's integrations."""
    user = signed_in(request)
    integration = get_object_or_404(integration_selectors.shown_to(user), pk=integration_id)
    if not integration_selectors.shown_to(user, Role.EDITOR).filter(pk=integration.pk).exists():
        raise PermissionDenied("Managing integrations needs the editor role on the form's team.")
    return integration


@login_required
@require_POST
def integration_toggle(request: HttpRequest, integration_id: str) -> HttpResponse:
    integration = _managed_integration(request, integration_id)
    integrations.integration_update(integration=integration, enabled=not integration.enabled,
                                    actor=signed_in(request))
    state = "enabled" if integration.enabled else "disabled"
    messages.success(request, f"{destination(integration)}: {state}.")
    return redirect("dashboard:integrations")


@login_required
@require_POST
def integration_test(request: HttpRequest, integration_id: str) -> HttpResponse:
    try:
        success, message = integrations.integration_send_test(
            integration=_managed_integration(request, integration_id), actor=signed_in(request)
        )
    except ServiceError as error:  # too many test sends
        success, message = False, error.message
    failed = message.removeprefix("Test event failed: ")
    if not success and failed != message:
        # In words here; the recorded text is under the integration's status, one click away.
        message = f"Test event not delivered. {shown_error(failed).summary}"  # type: ignore[union-attr]
    (messages.success if success else messages.error)(request, message)
    return redirect("dashboard:integrations")


@login_required
@require_POST
def integration_retry(request: HttpRequest, integration_id: str) -> HttpResponse:
    integration = _managed_integration(request, integration_id)
    if not integration.enabled:
        messages.error(request, "Enable the integration first: a disabled one receives nothing.")
        return redirect("dashboard:integrations")
    count = retry.deliveries_retry(integration_id=integration.pk)
    if count:
        messages.success(request, f"{count} failed deliveries will be sent again.")
    else:
        messages.success(request, "There are no failed deliveries to send again.")
    return redirect("dashboard:integrations")


@login_required
@require_POST
def integration_remove(request: HttpRequest, integration_id: str) -> HttpResponse:
    integration = _managed_integration(request, integration_id)
    integrations.integration_delete(integration=integration, actor=signed_in(request))
    messages.success(request, f"{destination(integration)}: deleted.")
    return redirect("dashboard:integrations")


@login_required
def google_connect(request: HttpRequest) -> HttpResponse:
    if not google.configured():
        messages.error(request, "Google Sheets is not configured on this server.")
        return redirect("dashboard:integrations")
    form_id = request.GET.get("formId")
    try:
        integration_selectors.sheets_form(signed_in(request), form_id)
    except ServiceError as error:  # asked here too, so the page says it rather than JSON
        messages.error(request, f"Google Sheets was not connected. {error.message}")
        return _integrations_page(request, status=error.status_code)
    suffix = f"?{urlencode({'formId': form_id})}" if form_id else ""
    return HttpResponseRedirect(f"/api/auth/google/login{suffix}")
