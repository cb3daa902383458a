"""Dashboard authentication: a JWT from ``Authorization: Bearer`` or the ``ff_token`` cookie."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from rest_framework import exceptions
from rest_framework.authentication import CSRFCheck
from rest_framework.request import Request
from rest_framework_simplejwt.authentication import JWTAuthentication
from rest_framework_simplejwt.exceptions import TokenError
from rest_framework_simplejwt.settings import api_settings
from rest_framework_simplejwt.tokens import AccessToken

from accounts.models import RevokedToken, User
from core.errors import ServiceError

API_KEY_PREFIX = "ff_live_"
# The user's token_version when the token was issued; tokens from before the last password
# change, reset or "log out everywhere" carry an older one and are refused.
TOKEN_VERSION_CLAIM = "ver"


def token_from_request(request: Request) -> tuple[str | None, bool]:
    """The raw token and whether it came from the cookie. The header wins over the cookie."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header:
        parts = header.split()
        if len(parts) != 2 or parts[0].lower() != "bearer":
            raise exceptions.AuthenticationFailed("Use the header 'Authorization: Bearer <token>'.")
        return parts[1], False
    cookie = request.COOKIES.get(settings.AUTH_COOKIE_NAME)
    return (cookie or None), True


def validated_token(raw: str) -> AccessToken:
    if raw.startswith(API_KEY_PREFIX):
        raise exceptions.AuthenticationFailed("API keys only work with the pull API.")
    try:
        token = AccessToken(raw)  # type: ignore[arg-type]  # simplejwt takes the encoded text
    except TokenError:
        raise exceptions.AuthenticationFailed("The token is invalid or has expired.") from None
    if RevokedToken.objects.filter(jti=token.get("jti", "")).exists():
        raise exceptions.AuthenticationFailed("The token has been revoked.")
    return token


def token_user(token: AccessToken) -> User | None:
    """The active user a valid token speaks for, or None if its version was revoked."""
    user_id = token.get(api_settings.USER_ID_CLAIM)
    user = User.objects.filter(pk=user_id, is_active=True).first() if user_id else None
    if user is None or token.get(TOKEN_VERSION_CLAIM, 0) != user.token_version:
        return None
    return user


class JWTCookieOrHeaderAuthentication(JWTAuthentication):
    www_authenticate_realm = "api"
    reads_session = True  # the schema documents the cookie session beside the bearer token

    def authenticate(  # type: ignore[override]  # our User, not simplejwt's AuthUser alias
        self, request: Request
    ) -> tuple[User, AccessToken] | None:
        raw, from_cookie = token_from_request(request)
        if raw is None:
            return None
        token = validated_token(raw)
        user = token_user(token)
        if user is None:
            raise exceptions.AuthenticationFailed(
                "The token has been revoked, or its user no longer exists."
            )
        if from_cookie:
            enforce_csrf(request)
        return user, token


def enforce_csrf(request: Request) -> None:
    """The same CSRF check SessionAuthentication applies: a cookie is sent by any page."""

    def dummy_get_response(_request):  # pragma: no cover - never called
        return None

    check = CSRFCheck(dummy_get_response)
    check.process_request(request)
    reason = check.process_view(request, None, (), {})  # type: ignore[arg-type]  # as DRF does
    if reason:
        raise ServiceError(
            "csrf_failed",
            "CSRF verification failed. Send the csrftoken cookie's value as X-CSRFToken.",
            status_code=403,
        )


def signed_in(request: HttpRequest | Request) -> User:
    """The user of a request that only a signed-in caller reaches (IsAuthenticated, the
    dashboard's login_required). Anything else here is a view wired wrong: refused as 401."""
    user = request.user
    if not isinstance(user, User):
        raise exceptions.NotAuthenticated()
    return user
