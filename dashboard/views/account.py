"""The Account page: the password, the time zone, the storage used, signing out everywhere."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts import services as accounts
from accounts.authentication import signed_in
from accounts.device import Client
from accounts.views import clear_auth_cookie, set_auth_cookie
from core.errors import ServiceError
from dashboard.auth import login_required
from dashboard.forms import ChangePasswordForm, TimeZoneForm
from dashboard.views.common import error_page, error_text, form_page
from dashboard.views.signin import NO_PASSWORD_YET
from dashboard.zones import time_zone_set
from files.selectors import usage_of


def _account_context(request: HttpRequest, form: ChangePasswordForm | None = None) -> dict:
    user = signed_in(request)
    has_password = user.has_usable_password()
    if form is None:
        form = ChangePasswordForm(has_password=has_password)
    return {"section": "account", "form": form, "no_password_yet": not has_password,
            "no_password_text": NO_PASSWORD_YET, **_storage(request)}


@login_required
def account(request: HttpRequest) -> HttpResponse:
    return render(request, "dashboard/account.html", _account_context(request))


def _storage(request: HttpRequest) -> dict[str, int]:
    used, quota = usage_of(signed_in(request).pk)
    return {"storage_used": used, "storage_quota": quota}


@login_required
@require_POST
def change_password(request: HttpRequest) -> HttpResponse:
    form = ChangePasswordForm(request.POST, has_password=signed_in(request).has_usable_password())
    context = _account_context(request, form)
    if not form.is_valid():
        return form_page(request, "dashboard/account.html", context)
    try:
        user = accounts.user_change_password(
            user=signed_in(request),
            current_password=form.cleaned_data.get("currentPassword"),
            new_password=form.cleaned_data["newPassword"],
            client=Client.of(request),
        )
    except ServiceError as error:
        messages.error(request, f"Password not changed. {error_text(error)}")
        return error_page(request, "dashboard/account.html", context, error)
    messages.success(request, "Password changed. Every other session was logged out.")
    response = redirect("dashboard:account")
    set_auth_cookie(response, accounts.token_for(user))
    return response


@login_required
@require_POST
def account_time_zone(request: HttpRequest) -> HttpResponse:
    """The Account page's time zone, or the browser's on a first visit (``auto``)."""
    posted = TimeZoneForm(request.POST)
    if not posted.is_valid():
        messages.error(request, "Choose a time zone from the list.")
        return redirect("dashboard:account")
    auto = posted.cleaned_data["auto"]
    stored = time_zone_set(user=signed_in(request), name=posted.cleaned_data["timeZone"],
                           only_if_unset=auto)
    if stored and not auto:
        messages.success(request, f"Times are now shown in {posted.cleaned_data['timeZone']}.")
    return redirect("dashboard:account")


@login_required
@require_POST
def logout_everywhere(request: HttpRequest) -> HttpResponse:
    accounts.user_log_out_everywhere(user=signed_in(request))
    messages.success(request, "You were logged out on every device.")
    response = redirect("dashboard:login")
    clear_auth_cookie(response)
    return response
