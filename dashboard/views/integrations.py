"""The integrations page: a card to add each kind, and each integration's switches."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
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
    rows = integration_selectors.integrations_of(request.user)
    forms_list = form_selectors.own_forms(signed_in(request))
    cards = [
        kind.card.render(RequestContext(request, {
            "forms": forms_list, "google_configured": google.configured(),
            "typed": _typed_into(kind, typed),
        }))
        for kind in kinds.KINDS.values() if kind.card is not None
    ]
    context = {
        "integrations": [
            (row, public_config(row), kinds.get(row.type), destination(row)) for row in rows
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
        messages.error(request, f"Integration not created. {error_text(error)}")
        return _integrations_page(request, status=400, typed=request.POST)
    messages.success(request, f"{destination(integration)}: integration created.")
    response = redirect("dashboard:integrations")
    secret = integration.secrets.get("signingSecret")
    if secret:
        # Shown once, on the page the redirect lands on, and kept nowhere else.
        reveal_once(response, request.user.pk, secret=secret)
    return response


def _owned_integration(request: HttpRequest, integration_id: str) -> Integration:
    """One the caller made and may still manage: editor or more on its form now, as the
    integrations API asks, so a member removed or demoted keeps no hold on a team form's."""
    user = signed_in(request)
    managed = integration_selectors.shown_to(user, Role.EDITOR).filter(owner=user)
    return get_object_or_404(managed, pk=integration_id)


@login_required
@require_POST
def integration_toggle(request: HttpRequest, integration_id: str) -> HttpResponse:
    integration = _owned_integration(request, integration_id)
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
            integration=_owned_integration(request, integration_id), actor=signed_in(request)
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
    integration = _owned_integration(request, integration_id)
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
    integration = _owned_integration(request, integration_id)
    integrations.integration_delete(integration=integration, actor=signed_in(request))
    messages.success(request, f"{destination(integration)}: deleted.")
    return redirect("dashboard:integrations")


@login_required
def google_connect(request: HttpRequest) -> HttpResponse:
    if not google.configured():
        messages.error(request, "Google Sheets is not configured on this server.")
        return redirect("dashboard:integrations")
    form_id = request.GET.get("formId")
    suffix = f"?formId={form_id}" if form_id else ""
    return HttpResponseRedirect(f"/api/auth/google/login{suffix}")
