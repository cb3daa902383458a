"""The pages before sign-in: sign-up and its code, sign-in and sign-out, a forgotten
password."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts import device, registration
from accounts import services as accounts
from accounts.device import Client
from accounts.public_pages import limited
from accounts.views import clear_auth_cookie, set_auth_cookie
from core.errors import ServiceError
from dashboard.auth import cookie_user, onward_page, safe_next
from dashboard.forms import EmailForm, LoginForm, ResetForm, SignupForm, TwoStepForm, VerifyForm
from dashboard.links import with_query
from dashboard.views.common import bound, error_page, error_text, form_page


@limited("dashboard-signup")
def signup(request: HttpRequest) -> HttpResponse:
    next_url = safe_next(request)
    form = bound(SignupForm, request, next=next_url)
    page = {"form": form, "registration": registration.mode(), "next": next_url}
    if request.method == "POST":
        try:
            registration.check(request.POST.get("email"))
        except ServiceError as error:
            messages.error(request, error_text(error))
            return error_page(request, "dashboard/signup.html", page, error)
    if not form.is_valid():
        return form_page(request, "dashboard/signup.html", page)
    email = form.cleaned_data["email"]
    try:
        accounts.user_sign_up(email=email, password=form.cleaned_data["password"],
                              client=Client.of(request), onward=onward_page(next_url))
    except ServiceError as error:
        messages.error(request, error_text(error))
        return error_page(request, "dashboard/signup.html", page, error)
    messages.success(request, "We emailed you a 6-digit code. Enter it below.")
    return with_query("dashboard:verify", email=email, **_onward(next_url))


def _onward(next_url: str) -> dict[str, str]:
    """The ``next`` query that takes a sign-up on to the page that sent it (an invitation's
    link), left off when that is the dashboard's home."""
    page = onward_page(next_url)
    return {"next": page} if page else {}


@limited("dashboard-verify")
def verify(request: HttpRequest) -> HttpResponse:
    next_url = safe_next(request)
    form = bound(VerifyForm, request, email=request.GET.get("email", ""), next=next_url)
    email = request.POST.get("email") or request.GET.get("email", "")
    page = {"form": form, "email": email, "next": next_url}
    if not form.is_valid():
        return form_page(request, "dashboard/verify.html", page)
    try:
        user = accounts.user_verify_email(email=form.cleaned_data["email"],
                                          code=form.cleaned_data["code"],
                                          client=Client.of(request))
    except ServiceError as error:
        messages.error(request, error_text(error))
        return error_page(request, "dashboard/verify.html", page, error)
    return signed_in_verified(request, user, next_url)


def signed_in_verified(request: HttpRequest, user, next_url: str | None = None) -> HttpResponse:
    """Verifying an address signs in (by its code or its mailed link): ``next_url`` (home by
    default), or the account page to set a password when the account has none yet
    (NO_PASSWORD_YET). A sign-in like any other, device cookie included: this browser is the
    owner's."""
    if not user.has_usable_password():
        messages.warning(request, NO_PASSWORD_YET)
        return _signed_in(user, reverse("dashboard:account"))
    return _signed_in(user, next_url or reverse("dashboard:home"))


NO_PASSWORD_YET = (
    "Your address is verified, but this account has no password yet: more than one sign-up "
    "for this address brought different passwords, so none of them was kept. Set one below."
)


@limited("dashboard-resend")
@require_POST
def resend(request: HttpRequest) -> HttpResponse:
    form = EmailForm(request.POST)
    email = request.POST.get("email", "")
    next_url = safe_next(request)
    try:
        if form.is_valid():
            accounts.user_resend_code(email=form.cleaned_data["email"],
                                      onward=onward_page(next_url))
    except ServiceError as error:  # the worker cannot be reached
        messages.error(request, error_text(error))
    else:
        messages.info(request, "If that address needs verification, a new code is on its way.")
    return with_query("dashboard:verify", email=email, **_onward(next_url))


@limited("dashboard-login")
def login(request: HttpRequest) -> HttpResponse:
    next_url = safe_next(request)
    if request.method != "POST" and cookie_user(request):
        return HttpResponseRedirect(next_url)
    form = bound(LoginForm, request, next=next_url)
    if not form.is_valid():
        return form_page(request, "dashboard/login.html", {"form": form, "next": next_url})
    email = form.cleaned_data["email"]
    try:
        user = accounts.user_authenticate(email=email, password=form.cleaned_data["password"],
                                          client=Client.of(request))
    except ServiceError as error:
        if error.code == "otp_required":  # the password was right: the code is a step of its own
            return _two_step_page(request, accounts.second_step_ticket(email), next_url)
        messages.error(request, error_text(error))
        if error.code == "email_not_verified":
            return with_query("dashboard:verify", email=email)
        context = {"form": form, "next": next_url}
        return error_page(request, "dashboard/login.html", context, error)
    return _signed_in(user, next_url)


@limited("dashboard-login")
@require_POST
def two_step(request: HttpRequest) -> HttpResponse:
    """The code, for an account with two-step sign-in, after its password was accepted."""
    form = TwoStepForm(request.POST)
    ticket = request.POST.get("ticket", "")
    next_url = safe_next(request)
    if not form.is_valid():
        return _two_step_page(request, ticket, next_url, form)
    try:
        user = accounts.user_authenticate_second_step(ticket=form.cleaned_data["ticket"],
                                                      otp=form.cleaned_data["code"],
                                                      client=Client.of(request))
    except ServiceError as error:
        messages.error(request, error_text(error))
        if error.code == "sign_in_expired":
            return redirect("dashboard:login")
        return _two_step_page(request, ticket, next_url, error=error)
    return _signed_in(user, next_url)


def _two_step_page(request: HttpRequest, ticket: str, next_url: str,
                   form: TwoStepForm | None = None,
                   error: ServiceError | None = None) -> HttpResponse:
    form = form or TwoStepForm(initial={"ticket": ticket, "next": next_url})
    context = {"form": form, "next": next_url}
    if error is not None:
        return error_page(request, "dashboard/two_step.html", context, error)
    return form_page(request, "dashboard/two_step.html", context)


def _signed_in(user, next_url: str) -> HttpResponse:
    response = HttpResponseRedirect(next_url)
    set_auth_cookie(response, accounts.token_for(user))
    device.remember(response, user)
    return response


@require_POST
def logout(request: HttpRequest) -> HttpResponse:
    accounts.token_revoke_if_valid(request.COOKIES.get(settings.AUTH_COOKIE_NAME))
    response = redirect("dashboard:login")
    clear_auth_cookie(response)
    return response


@limited("dashboard-forgot")
def forgot_password(request: HttpRequest) -> HttpResponse:
    form = bound(EmailForm, request)
    if not form.is_valid():
        return form_page(request, "dashboard/forgot.html", {"form": form})
    email = form.cleaned_data["email"]
    try:
        accounts.user_forgot_password(email=email)
    except ServiceError as error:  # the worker cannot be reached
        messages.error(request, error_text(error))
        return error_page(request, "dashboard/forgot.html", {"form": form}, error)
    messages.info(request, "If that address has an account, we emailed it a 6-digit code.")
    return with_query("dashboard:reset-password", email=email)


@limited("dashboard-reset")
def reset_password(request: HttpRequest) -> HttpResponse:
    form = bound(ResetForm, request, email=request.GET.get("email", ""))
    if not form.is_valid():
        return form_page(request, "dashboard/reset.html", {"form": form})
    try:
        accounts.user_reset_password(
            email=form.cleaned_data["email"],
            code=form.cleaned_data["code"],
            password=form.cleaned_data["password"],
        )
    except ServiceError as error:
        messages.error(request, error_text(error))
        return error_page(request, "dashboard/reset.html", {"form": form}, error)
    messages.success(request, "Your password was changed. Log in with the new one.")
    return redirect("dashboard:login")
