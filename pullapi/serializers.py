from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import strict
from core.timefmt import TimestampField
from pullapi.models import SCOPES, ApiKey


@extend_schema_field({"type": "array", "items": {"type": "string", "enum": list(SCOPES)}})
class ScopesField(serializers.JSONField):
    """Checked by the service, so any problem is reported under ``scopes`` itself."""


class ApiKeyInputSerializer(serializers.Serializer):
    name = strict.CharField(min_length=1, max_length=100)
    forms = serializers.ListField(
        child=strict.CharField(max_length=100), min_length=1, max_length=500
    )
    scopes = ScopesField(
        required=False,
        help_text='["read"] (the default: the pull API), or ["read", "hooks"] for a key that '
        "may also manage REST hook subscriptions (/api/v1/hooks).",
    )


class ApiKeySerializer(serializers.ModelSerializer):
    _id = serializers.CharField(source="pk", read_only=True)
    forms = serializers.SerializerMethodField()
    createdAt = TimestampField(source="created_at")
    lastUsedAt = TimestampField(source="last_used_at", allow_null=True)
    revokedAt = TimestampField(source="revoked_at", allow_null=True)
    scopes = serializers.ListField(
        source="scope_list", child=serializers.ChoiceField(choices=list(SCOPES))
    )

    class Meta:
        model = ApiKey
        fields = ["_id", "name", "prefix", "forms", "scopes", "createdAt", "lastUsedAt",
                  "revokedAt"]
        read_only_fields = fields

    def get_forms(self, api_key: ApiKey) -> list[str]:
        return [str(form.pk) for form in api_key.forms.all()]


class NewApiKeySerializer(ApiKeySerializer):
    key = serializers.CharField(read_only=True)

    class Meta(ApiKeySerializer.Meta):
        fields = [*ApiKeySerializer.Meta.fields, "key"]
