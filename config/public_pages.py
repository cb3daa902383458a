"""Limits on pages anyone can load without signing in (the dashboard's account pages and the
admin's sign-in): AUTH_REQUESTS_PER_MINUTE requests a minute per client address, and the
admin's sign-in also under the failed sign-in limits (accounts/signin_guard.py). Over a limit
the page answers 429 with Retry-After."""

from __future__ import annotations

from functools import wraps

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from config import ratelimit
from config.errors import ServiceError
from config.net import client_ip, rate_key


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
    """The admin's sign-in, checked by the same service as every other sign-in surface (its
    limits, its device cookie); Django's own form then signs the operator in."""
    from accounts import device, services
    from accounts.device import Client

    user = None
    if request.method == "POST":
        try:
            user = services.user_authenticate(
                email=request.POST.get("username", ""),
                password=request.POST.get("password", ""),
                client=Client.of(request),
            )
        except ServiceError as error:
            if error.status_code == 429:
                return too_many(error)
    response = admin.site.login(request)
    if user is not None and response.status_code == 302:
        device.remember(response, user)
    return response
