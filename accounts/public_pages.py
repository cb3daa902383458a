"""Limits on pages anyone can load without signing in (the dashboard's account pages and the
admin's sign-in): AUTH_REQUESTS_PER_MINUTE requests a minute per client address, and the
admin's sign-in also under the failed sign-in limits (accounts/signin_guard.py). Over a limit
the page answers 429 with Retry-After."""

from __future__ import annotations

from functools import wraps

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from core.errors import ServiceError
from core.infra import ratelimit
from core.net import client_ip, rate_key


def too_many(error: ServiceError) -> HttpResponse:
    response = HttpResponse(
        f"<!doctype html><title>Too many requests</title><p>{error.message}</p>",
        status=error.status_code,
    )
    for name, value in error.headers.items():
        response[name] = value
    return response


def limited(group: str):
    def decorate(view):
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            try:
                key = rate_key(client_ip(request))
                ratelimit.enforce(f"page:{group}", key, settings.AUTH_REQUESTS_PER_MINUTE)
            except ServiceError as error:
                return too_many(error)
            return view(request, *args, **kwargs)

        return wrapper

    return decorate


@limited("admin-login")
def admin_login(request: HttpRequest) -> HttpResponse:
    """The admin's sign-in: Django's view with accounts.admin.StaffSignInForm, which checks it
    through the same service as every other surface. Past a limit the page answers 429; an
    operator without two-step sign-in is signed in to the dashboard to turn it on."""
    from django.shortcuts import redirect

    from accounts import device, services
    from accounts.views import set_auth_cookie

    response = admin.site.login(request)
    refusal = getattr(request, "signin_refusal", None)
    if refusal is not None and refusal.status_code == 429:
        return too_many(refusal)
    needs_setup = getattr(request, "needs_two_factor", None)
    if needs_setup is not None:
        response = redirect("dashboard:two-factor")
        set_auth_cookie(response, services.token_for(needs_setup))
        device.remember(response, needs_setup)
    elif response.status_code == 302 and request.user.is_authenticated:
        device.remember(response, request.user)
    return response
