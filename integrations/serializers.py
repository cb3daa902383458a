from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import strict
from core.api.strict import StrictSerializer
from core.timefmt import TimestampField
from integrations import kinds
from integrations.models import DeliveryState, Integration
from integrations.schema import CONFIG_OUT, ConfigInField, ConfigPatchField


class IntegrationCreateSerializer(StrictSerializer):
    type = serializers.ChoiceField(choices=sorted(kinds.KINDS))
    config = ConfigInField()
    formId = strict.CharField(max_length=100, allow_null=True, required=False)


class IntegrationUpdateSerializer(StrictSerializer):
    ignored_keys = {"_id", "type", "createdAt"}

    enabled = strict.BooleanField(required=False)
    config = ConfigPatchField(required=False)
    formId = strict.CharField(max_length=100, allow_null=True, required=False)


def public_config(integration: Integration, reveal: bool = False) -> dict[str, Any]:
    """The config as the owner may see it: secrets in full only on creation."""
    kind = kinds.get(integration.type)
    return kind.public_config(integration.config, integration.secrets, reveal)


class IntegrationSerializer(serializers.ModelSerializer):
    _id = serializers.CharField(source="pk", read_only=True)
    createdAt = TimestampField(source="created_at")
    formId = serializers.SerializerMethodField()
    config = serializers.SerializerMethodField()

    class Meta:
        model = Integration
        fields = ["_id", "type", "enabled", "createdAt", "formId", "config"]
        read_only_fields = fields

    def get_formId(self, integration: Integration) -> str | None:
        return str(integration.form_id) if integration.form_id else None

    @extend_schema_field(CONFIG_OUT)
    def get_config(self, integration: Integration) -> dict[str, Any]:
        return public_config(integration, reveal=self.context.get("reveal", False))


class IntegrationStatusSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["healthy", "failing", "never_run"])
    lastRun = TimestampField(source="last_run_at", allow_null=True)
    lastError = serializers.CharField(source="last_error", allow_null=True)
    failedDeliveries = serializers.IntegerField(
        source="failed_deliveries",
        help_text="Submission deliveries that used all their attempts and were not sent again "
        "since: the status follows only the latest attempt, and this does not hide behind it.",
    )


class TestResultSerializer(serializers.Serializer):
    success = serializers.BooleanField()
    message = serializers.CharField()


class LedgerEntrySerializer(serializers.Serializer):
    """One delivery of a submission to one integration (contract, "the delivery ledger")."""

    _id = serializers.CharField(source="pk")
    integrationId = serializers.CharField(source="integration_id")
    type = serializers.CharField(source="integration.type")
    state = serializers.SerializerMethodField()
    attempts = serializers.IntegerField()
    lastError = serializers.CharField(source="last_error", allow_null=True)
    lastAttemptAt = TimestampField(source="last_attempt_at", allow_null=True)
    nextAttemptAt = serializers.SerializerMethodField()

    @extend_schema_field(serializers.ChoiceField(choices=["pending", "delivered", "failed"]))
    def get_state(self, delivery) -> str:
        return delivery.shown_state

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_nextAttemptAt(self, delivery) -> str | None:
        if delivery.state != DeliveryState.PENDING:
            return None
        return TimestampField().to_representation(delivery.next_attempt_at)
