"""Pull API authentication: ``Authorization: Bearer ff_live_...`` and nothing else."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from accounts.models import User
from pullapi.keys import PREFIX
from pullapi.models import ApiKey
from pullapi.services import api_key_for


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[User, ApiKey] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        parts = header.split()
        if len(parts) != 2 or parts[0].lower() != "bearer":
            raise exceptions.AuthenticationFailed(
                "Use the header 'Authorization: Bearer <API key>'."
            )
        api_key = api_key_for(parts[1])
        if api_key is None:
            raise exceptions.AuthenticationFailed("The API key is invalid or has been revoked.")
        return api_key.owner, api_key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="pull-api"'


class KeyOrSessionAuthentication(ApiKeyAuthentication):
    """An API key when the bearer token is one; anything else is left to the dashboard's
    authentication, listed after this one (the REST hook endpoints take both)."""

    def authenticate(self, request: Request) -> tuple[User, ApiKey] | None:
        parts = request.META.get("HTTP_AUTHORIZATION", "").split()
        if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1].startswith(PREFIX):
            return None
        return super().authenticate(request)
