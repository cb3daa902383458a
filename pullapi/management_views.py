"""Dashboard endpoints that manage API keys (JWT only; API keys cannot call these)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import signed_in
from pullapi import services
from pullapi.models import ApiKey
from pullapi.serializers import ApiKeyInputSerializer, ApiKeySerializer, NewApiKeySerializer


class ApiKeyViewSet(mixins.ListModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet):
    serializer_class = ApiKeySerializer

    def get_queryset(self):
        return (
            ApiKey.objects.filter(owner=self.request.user)
            .prefetch_related("forms")
            .order_by("-created_at")
        )

    @extend_schema(request=ApiKeyInputSerializer, responses={201: NewApiKeySerializer})
    def create(self, request: Request) -> Response:
        serializer = ApiKeyInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        api_key, plain = services.api_key_create(
            owner=signed_in(request), actor=signed_in(request), **serializer.validated_data
        )
        api_key.key = plain  # type: ignore[attr-defined]  # shown in this answer only
        return Response(NewApiKeySerializer(api_key).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Revoke an API key", responses={204: None})
    def destroy(self, request: Request, pk: str) -> Response:
        services.api_key_revoke(api_key=self.get_object(), actor=signed_in(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
