"""The API keys page: create a key (shown once) and revoke one. A key may read one's own
forms and those of the teams where one is admin or owner, as the API's (pullapi/services.py),
and each is offered with its team named."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from accounts.authentication import signed_in
from core.errors import ServiceError
from dashboard.auth import login_required
from dashboard.forms import ApiKeyForm
from dashboard.reveal import reveal_once, revealed, shown
from dashboard.views.common import error_text
from forms_app import selectors as form_selectors
from forms_app.models import Form
from pullapi import selectors as key_selectors
from pullapi import services as keys
from pullapi.models import ApiKey
from teams.roles import Role


def _keys_page(request: HttpRequest, status: int = 200, key_form: ApiKeyForm | None = None,
               **extra: Any) -> HttpResponse:
    rows = key_selectors.api_keys_of(request.user)
    offered = _offered(request)
    context = {
        "keys": rows,
        # A key reads a team's form only while its maker is admin there: a form it was given
        # before a demotion or a removal is still named, marked as no longer read.
        "readable": {form.pk for form in offered},
        "forms": offered,
        "key_form": key_form or ApiKeyForm(offered=offered),
        "section": "keys",
        **extra,
    }
    return render(request, "dashboard/api_keys.html", context, status=status)


def _offered(request: HttpRequest) -> list[Form]:
    return list(form_selectors.forms_with_role(signed_in(request), Role.ADMIN))


@login_required
def api_keys(request: HttpRequest) -> HttpResponse:
    return shown(request, _keys_page(request, new_key=revealed(request).get("key")))


@login_required
@require_POST
def api_key_create(request: HttpRequest) -> HttpResponse:
    posted = ApiKeyForm(request.POST, offered=_offered(request))
    if not posted.is_valid():
        messages.error(request, "Give the key a name and choose at least one form.")
        return _keys_page(request, status=400, key_form=posted)
    values = posted.cleaned_data
    try:
        api_key, plain = keys.api_key_create(
            owner=signed_in(request), name=values["name"], forms=values["forms"],
            scopes=["read", "hooks"] if values["hooks"] else ["read"], actor=signed_in(request))
    except ServiceError as error:  # the API's answer: 400 no role on a form, 403 too low
        messages.error(request, error_text(error))
        return _keys_page(request, status=error.status_code, key_form=posted)
    messages.success(request, f"API key “{api_key.name}” created. Copy it now: it is shown once.")
    return reveal_once(redirect("dashboard:api-keys"), request.user.pk, key=plain)


@login_required
@require_POST
def api_key_revoke(request: HttpRequest, key_id: str) -> HttpResponse:
    api_key = get_object_or_404(ApiKey, pk=key_id, owner=request.user)
    keys.api_key_revoke(api_key=api_key, actor=signed_in(request))
    messages.success(request, f"API key “{api_key.name}” revoked.")
    return redirect("dashboard:api-keys")
