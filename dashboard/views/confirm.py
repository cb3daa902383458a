"""The page behind the link mailed beside every code (contract, "Account security"). Opening
it changes nothing, since mail scanners fetch links; its one button verifies the address and
signs in, or opens the form to set a new password. No wrong code ever stops it."""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts import services as accounts
from accounts.device import Client
from accounts.models import CodePurpose
from accounts.public_pages import limited
from core.errors import ServiceError
from dashboard.auth import onward_page, safe_next
from dashboard.forms import NewPasswordForm
from dashboard.views.common import error_page, error_text, form_page
from dashboard.views.signin import signed_in_verified

# The token is in the page's address: no other site may see it in a Referer. Not
# "no-referrer", which makes browsers send "Origin: null" with the button's post, and that
# fails the CSRF check.
REFERRER_POLICY = "same-origin"


def with_referrer_policy(view):
    @wraps(view)
    def wrapper(request: HttpRequest, token: str) -> HttpResponse:
        response = view(request, token)
        response["Referrer-Policy"] = REFERRER_POLICY
        return response

    return wrapper


@limited("dashboard-confirm")
@require_http_methods(["GET", "HEAD", "POST"])
@with_referrer_policy
def confirm(request: HttpRequest, token: str) -> HttpResponse:
    target = accounts.link_target(token)
    if target is None:
        return invalid_link(request)
    purpose, email = target
    if request.method != "POST":
        return render(request, "dashboard/confirm.html",
                      {"purpose": purpose, "email": email,
                       "next": onward_page(safe_next(request))})
    if purpose == CodePurpose.VERIFY:
        return verify(request, token)
    return reset(request, token)


def invalid_link(request: HttpRequest) -> HttpResponse:
    # Alike for a used, an expired and an unknown token: it says nothing about any account.
    return render(request, "dashboard/confirm_invalid.html", status=404)


def verify(request: HttpRequest, token: str) -> HttpResponse:
    try:
        user = accounts.user_verify_by_link(token=token, client=Client.of(request))
    except ServiceError:  # used by a press a moment before this one
        return invalid_link(request)
    # The page the mailed link named as ``next`` (the invitation that sent the person to sign
    # up), carried by the button's post: only a page of the dashboard, else home.
    return signed_in_verified(request, user, safe_next(request))


def reset(request: HttpRequest, token: str) -> HttpResponse:
    """The button's post opens the form; the form's post (with a password) sets it."""
    if "password" not in request.POST:
        return render(request, "dashboard/confirm_reset.html", {"form": NewPasswordForm()})
    form = NewPasswordForm(request.POST)
    if not form.is_valid():
        return form_page(request, "dashboard/confirm_reset.html", {"form": form})
    try:
        accounts.user_reset_by_link(token=token, password=form.cleaned_data["password"])
    except ServiceError as error:
        if error.code == "invalid_link":
            return invalid_link(request)
        messages.error(request, error_text(error))
        return error_page(request, "dashboard/confirm_reset.html", {"form": form}, error)
    messages.success(request, "Your password was changed. Log in with the new one.")
    return redirect("dashboard:login")
