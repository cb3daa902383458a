"""``/api/v1/erasures``: erasure by address, its preview and its receipts (dashboard auth)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import signed_in
from core.api import strict
from core.api.strict import StrictSerializer
from core.timefmt import TimestampField
from submissions import erasure
from submissions.models import Erasure

EMAIL = {"type": "string", "format": "email", "maxLength": 320}


@extend_schema_field(EMAIL)
class EmailText(strict.CharField):
    """Text the service checks as an address, so every problem is under ``email``."""


class ErasureInputSerializer(StrictSerializer):
    email = EmailText(max_length=320, help_text="the address to erase, in any case")


class ErasureSerializer(serializers.ModelSerializer):
    _id = serializers.CharField(source="pk", read_only=True)
    email = serializers.CharField(source="email_hint",
                                  help_text="the address masked to its last 4 characters")
    submissions = serializers.IntegerField(help_text="how many submissions were erased")
    createdAt = TimestampField(source="created_at")

    class Meta:
        model = Erasure
        fields = ["_id", "email", "submissions", "createdAt"]
        read_only_fields = fields


class ErasurePreviewSerializer(serializers.Serializer):
    submissions = serializers.IntegerField()
    forms = serializers.ListField(child=serializers.CharField(), help_text="form _ids")


class ErasureViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Erasure by address (dashboard auth only): every submission of the account's forms
    whose values hold the address is deleted; a receipt keeps the address masked."""

    serializer_class = ErasureSerializer

    def finalize_response(self, request: Request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Cache-Control"] = "no-store"  # who was erased, and where
        return response

    def get_queryset(self):
        return erasure.erasures_of(signed_in(self.request))

    @extend_schema(
        summary="Erase every submission that holds an address",
        description="Any field, any case, both folders; each erased submission is announced "
        "as submission.deleted. Only a hash of the address is kept.",
        request=ErasureInputSerializer, responses={201: ErasureSerializer},
    )
    def create(self, request: Request) -> Response:
        serializer = ErasureInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        receipt = erasure.erasure_create(owner=signed_in(request),
                                         email=serializer.validated_data["email"],
                                         actor=signed_in(request))
        return Response(ErasureSerializer(receipt).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="List the erasure receipts, newest first",
                   responses={200: ErasureSerializer(many=True)})
    def list(self, request: Request, *args, **kwargs) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        summary="How many submissions an erasure would delete, and of which forms",
        parameters=[OpenApiParameter("email", EMAIL, required=True)],
        responses={200: ErasurePreviewSerializer},
    )
    @action(detail=False, methods=["get"])
    def preview(self, request: Request) -> Response:
        email = request.query_params.get("email", "")
        return Response(erasure.erasure_preview(owner=signed_in(request), email=email))
