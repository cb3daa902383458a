"""Two-step sign-in: set it up with an authenticator app, its recovery codes, turning it off."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts import services as accounts
from accounts import two_factor as accounts_two_factor
from accounts.authentication import signed_in
from accounts.device import Client
from accounts.views import set_auth_cookie
from core.errors import ServiceError
from dashboard.auth import login_required
from dashboard.forms import TwoFactorCodeForm, TwoFactorDisableForm
from dashboard.qr import qr_svg
from dashboard.reveal import reveal_once, revealed, shown
from dashboard.views.common import error_page, error_text, form_page


@login_required
def two_factor_page(request: HttpRequest) -> HttpResponse:
    user = signed_in(request)
    context = {"section": "account", "enabled": accounts_two_factor.is_enabled(user),
               "left": accounts_two_factor.recovery_codes_left(user),
               "form": TwoFactorDisableForm()}
    return render(request, "dashboard/two_factor.html", context)


@login_required
@require_POST
def two_factor_setup(request: HttpRequest) -> HttpResponse:
    """A new secret waiting for its first code; the page that shows it is a GET."""
    try:
        accounts_two_factor.setup(user=signed_in(request))
    except ServiceError as error:
        messages.error(request, error.message)
        return redirect("dashboard:two-factor")
    return redirect("dashboard:two-factor-new")


@login_required
def two_factor_new(request: HttpRequest) -> HttpResponse:
    """The pending secret as a QR code drawn on the page, and the form for its first code."""
    waiting = accounts_two_factor.pending(signed_in(request))
    if waiting is None:
        return redirect("dashboard:two-factor")
    secret, uri = waiting
    context = {"section": "account", "secret": secret, "qr": qr_svg(uri),
               "form": TwoFactorCodeForm()}
    return render(request, "dashboard/two_factor_setup.html", context)


@login_required
@require_POST
def two_factor_enable(request: HttpRequest) -> HttpResponse:
    user = signed_in(request)
    try:
        codes = accounts_two_factor.enable(user=user, code=request.POST.get("code", ""))
    except ServiceError as error:
        messages.error(request, f"{error.message} Try the app's newest code.")
        return redirect("dashboard:two-factor-new")
    # The recovery codes reach the next page once, in the reveal cookie, never stored in clear.
    response = reveal_once(redirect("dashboard:two-factor-codes"), user.pk,
                           codes=" ".join(codes))
    set_auth_cookie(response, accounts.token_for(user))  # every other session was logged out
    return response


@login_required
def two_factor_codes(request: HttpRequest) -> HttpResponse:
    """The recovery codes, shown on the page the enable redirected to, and never again."""
    codes = revealed(request).get("codes", "").split()
    if not codes:
        return redirect("dashboard:two-factor")
    response = render(request, "dashboard/two_factor_codes.html",
                      {"section": "account", "codes": codes})
    return shown(request, response)


@login_required
@require_POST
def two_factor_disable(request: HttpRequest) -> HttpResponse:
    form = TwoFactorDisableForm(request.POST)
    user = signed_in(request)
    context = {"section": "account", "enabled": True, "form": form,
               "left": accounts_two_factor.recovery_codes_left(user)}
    if not form.is_valid():
        return form_page(request, "dashboard/two_factor.html", context)
    try:
        accounts_two_factor.disable(user=user, password=form.cleaned_data["password"],
                                    code=form.cleaned_data["code"], client=Client.of(request))
    except ServiceError as error:
        messages.error(request, error_text(error))
        return error_page(request, "dashboard/two_factor.html", context, error)
    messages.success(request, "Two-step sign-in is off. Every other session was logged out.")
    response = redirect("dashboard:two-factor")
    set_auth_cookie(response, accounts.token_for(user))
    return response
