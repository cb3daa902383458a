from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action, api_view
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import signed_in
from core.api.schema import error
from integrations import selectors, services
from integrations.delivery import retry
from integrations.models import Integration
from integrations.schema import create_request
from integrations.serializers import (
    IntegrationCreateSerializer,
    IntegrationSerializer,
    IntegrationStatusSerializer,
    IntegrationUpdateSerializer,
    LedgerEntrySerializer,
    TestResultSerializer,
)
from submissions.api.form_submissions import UnderForm


class IntegrationViewSet(mixins.ListModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet):
    serializer_class = IntegrationSerializer

    def get_queryset(self):
        return selectors.listed(self.request.user).order_by("-created_at")

    def _input(self, serializer_class) -> dict:
        serializer = serializer_class(data=self.request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    @extend_schema(request={"application/json": create_request()},
                   responses={201: IntegrationSerializer})
    def create(self, request: Request) -> Response:
        data = self._input(IntegrationCreateSerializer)
        integration = services.integration_create(
            owner=signed_in(request),
            type=data["type"],
            config=data["config"],
            form_id=data.get("formId"),
            actor=signed_in(request),
        )
        body = IntegrationSerializer(integration, context={"reveal": True}).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=IntegrationUpdateSerializer, responses={200: IntegrationSerializer})
    def partial_update(self, request: Request, pk: str) -> Response:
        data = self._input(IntegrationUpdateSerializer)
        changes = {"enabled": data.get("enabled")}
        if "config" in data:
            changes["config"] = data["config"]
        if "formId" in data:
            changes["form_id"] = data["formId"]
        integration = services.integration_update(integration=self.get_object(),
                                                  actor=signed_in(request), **changes)
        return Response(IntegrationSerializer(integration).data)

    def perform_destroy(self, instance: Integration) -> None:
        services.integration_delete(integration=instance, actor=signed_in(self.request))

    @extend_schema(request=None, responses={
        200: TestResultSerializer,
        429: error("rate_limited: at most 10 test sends a minute"),
    })
    @action(detail=True, methods=["post"])
    def test(self, request: Request, pk: str) -> Response:
        success, message = services.integration_send_test(integration=self.get_object(),
                                                         actor=signed_in(request))
        return Response({"success": success, "message": message})

    @extend_schema(responses={200: IntegrationStatusSerializer})
    @action(detail=True, methods=["get"], url_path="status")
    def health(self, request: Request, pk: str) -> Response:
        integration = self.get_object()
        integration.failed_deliveries = selectors.failed_deliveries_of(integration)
        return Response(IntegrationStatusSerializer(integration).data)


@extend_schema(
    request=None,
    responses={
        202: LedgerEntrySerializer,
        409: error("not_retryable: the delivery is delivered, waiting or dropped"),
    },
    summary="Retry one failed delivery with a fresh set of attempts",
    description="409 unless the delivery failed and its integration is enabled.",
)
@api_view(["POST"])
def delivery_retry(request: Request, delivery_id: str) -> Response:
    delivery = retry.delivery_retry(owner=signed_in(request), delivery_id=delivery_id)
    delivery.last_attempt_at = None  # type: ignore[attr-defined]  # no attempt of it yet
    return Response(LedgerEntrySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)


# Under the form's path, beside the submissions app's routes for the same submission.
class SubmissionDeliveryViewSet(UnderForm):
    @extend_schema(
        request=None,
        responses={200: LedgerEntrySerializer(many=True)},
        summary="The delivery ledger: which integrations received a submission",
    )
    @action(
        detail=True,
        methods=["get"],
        url_path=r"submissions/(?P<submission_id>[^/]+)/deliveries",
        url_name="submission-deliveries",
    )
    def deliveries(self, request: Request, pk: str, submission_id: str) -> Response:
        entries = selectors.ledger_of(self.submission(submission_id))
        return Response(LedgerEntrySerializer(entries, many=True).data)
