"""Query parameters of the pull API, validated into one 400 ``invalid_parameter`` shape."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import strict
from core.api.query import SinceParam, invalid_parameter, parse_since, validated
from core.api.schema import SPACE

__all__ = ["SinceParam", "invalid_parameter", "parse_since", "validated"]

MAX_FIELD_NAMES = 200


# A name somewhere (not only commas and spaces), and no NUL anywhere.
@extend_schema_field({"type": "string", "minLength": 1,
                      "pattern": f"^[^\\u0000]*[^,{SPACE}\\u0000][^\\u0000]*$",
                      "description": "Comma-separated field names (at most 200)"})
class FieldsParam(serializers.CharField):
    def to_internal_value(self, data) -> set[str]:  # type: ignore[override]
        if "\x00" in str(data):  # no field name holds one, and PostgreSQL refuses it
            raise serializers.ValidationError("Null characters are not allowed.")
        names = {name.strip() for name in str(data).split(",") if name.strip()}
        if not names:
            raise serializers.ValidationError("Name at least one field, separated by commas.")
        if len(names) > MAX_FIELD_NAMES:
            raise serializers.ValidationError(f"Name at most {MAX_FIELD_NAMES} fields.")
        return names


class DetailParams(serializers.Serializer):
    fields = FieldsParam(required=False)  # type: ignore[assignment]  # a declared field


class StreamParams(DetailParams):
    formId = strict.CharField(min_length=1, max_length=100, help_text="Form id or slug")
    since = SinceParam(required=False)


class ListParams(DetailParams):
    formId = strict.CharField(min_length=1, max_length=100, help_text="Form id or slug")
    limit = serializers.IntegerField(min_value=1, max_value=100, default=25)
    cursor = strict.CharField(min_length=1, max_length=4000, required=False,
                                   help_text="nextCursor of the previous page")
    since = SinceParam(required=False)
    order = serializers.ChoiceField(choices=["desc", "asc"], default="desc")
