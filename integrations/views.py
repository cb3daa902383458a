from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action, api_view
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import signed_in
from core.api import strict
from core.api.schema import ROLE_TOO_LOW, error
from core.errors import forbidden
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
from teams.roles import Role


# One's own integrations, and those of the forms of one's teams: a viewer reads them (secrets
# never shown), an editor manages them. (A docstring would become each operation's description.)
class IntegrationViewSet(mixins.ListModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet):
    serializer_class = IntegrationSerializer
    reading = ("list", "health")

    def get_queryset(self):
        return selectors.shown_to(self.request.user).order_by("-created_at")

    def get_object(self) -> Integration:
        integration = super().get_object()
        managed = selectors.shown_to(self.request.user, Role.EDITOR)
        if self.action not in self.reading and not managed.filter(pk=integration.pk).exists():
            raise forbidden("Managing integrations needs the editor role on the form's team.")
        return integration

    def _input(self, serializer_class) -> dict:
        serializer = serializer_class(data=self.request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    @extend_schema(request={"application/json": create_request()},
                   responses={201: IntegrationSerializer, 403: error(ROLE_TOO_LOW)})
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

    @extend_schema(request=IntegrationUpdateSerializer,
                   responses={200: IntegrationSerializer, 403: error(ROLE_TOO_LOW)})
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

    @extend_schema(responses={204: None, 403: error(ROLE_TOO_LOW)})
    def destroy(self, request: Request, pk: str) -> Response:
        return super().destroy(request, pk)

    def perform_destroy(self, instance: Integration) -> None:
        services.integration_delete(integration=instance, actor=signed_in(self.request))

    @extend_schema(request=None, responses={
        200: TestResultSerializer,
        403: error(ROLE_TOO_LOW),
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
        integration.failed_deliveries = selectors.failed_deliveries_of(  # type: ignore[attr-defined]
            integration)  # shown by IntegrationStatusSerializer
        return Response(IntegrationStatusSerializer(integration).data)


@extend_schema(
    request=None,
    responses={
        202: LedgerEntrySerializer,
        403: error(ROLE_TOO_LOW),
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


class NotifyInput(strict.StrictSerializer):
    notify = strict.BooleanField(required=False,
                                 help_text="Email me each submission of this form.")


class NotifySerializer(serializers.Serializer):
    notify = serializers.BooleanField()


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

    @extend_schema(
        request=NotifyInput,
        responses={200: NotifySerializer},
        summary="Whether the caller is emailed each submission of the form",
        description="Any role on the form. On for the form's creator by default (its "
                    "`notifyOwner`), off for the team's other members.",
    )
    @action(detail=True, methods=["patch"], url_path="me", url_name="me")
    def me(self, request: Request, pk: str) -> Response:
        asked = NotifyInput(data=request.data)
        asked.is_valid(raise_exception=True)
        form, user = self.get_object(), signed_in(request)
        if "notify" not in asked.validated_data:  # a PATCH that changes nothing
            return Response({"notify": services.owner_notified(form=form, user=user)})
        notify = services.owner_notify_set(form=form, user=user,
                                           notify=asked.validated_data["notify"])
        return Response({"notify": notify})
