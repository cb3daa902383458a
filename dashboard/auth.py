"""The dashboard signs in with the same ``ff_token`` cookie as the JSON API."""

from __future__ import annotations

from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from rest_framework.exceptions import AuthenticationFailed

from accounts.authentication import token_user, validated_token
from accounts.models import User
from dashboard.links import with_query
from dashboard.zones import zone_of


def cookie_user(request: HttpRequest) -> User | None:
    raw = request.COOKIES.get(settings.AUTH_COOKIE_NAME)
    if not raw:
        return None
    try:
        token = validated_token(raw)
    except AuthenticationFailed:
        return None
    return token_user(token)


def login_required(view):
    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        user = cookie_user(request)
        if user is None:
            return with_query("dashboard:login", next=request.path)
        request.user = user
        # What the templates show a signed-in owner by; request.user alone may also be an
        # admin's session, which does not sign anyone in to the dashboard.
        request.dashboard_user = user  # type: ignore[attr-defined]
        # Times and search days in the owner's zone, for this request only.
        with timezone.override(zone_of(user)):
            return view(request, *args, **kwargs)

    return wrapper


def safe_next(request: HttpRequest) -> str:
    """Where to go after signing in: a page of the dashboard, never another site."""
    home = reverse("dashboard:home")
    target = request.POST.get("next") or request.GET.get("next") or home
    return target if target.startswith(home) else home


def onward_page(next_url: str) -> str:
    """A ``safe_next`` value as the page a sign-up goes on to after verifying (an
    invitation's): "" for the dashboard's home, where it goes anyway."""
    return "" if next_url == reverse("dashboard:home") else next_url
