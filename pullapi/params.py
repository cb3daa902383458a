"""Query parameters of the pull API, validated into one 400 ``invalid_parameter`` shape."""

from __future__ import annotations

from datetime import UTC, datetime, time

from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import strict
from core.api.schema import SPACE
from core.errors import ServiceError, flatten_details

MAX_FIELD_NAMES = 200


def parse_since(value: str) -> datetime | None:
    # An unencoded "+02:00" arrives as " 02:00": read it the way the client meant it.
    text = value.strip().replace(" ", "+").upper()  # RFC 3339 allows "t" and "z" too
    try:
        moment = parse_datetime(text)
        if moment is None:
            day = parse_date(text)
            moment = datetime.combine(day, time.min) if day else None
    except ValueError:
        return None
    if moment is None:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        # 0001-01-01T00:00+05:30 is before the first UTC instant Python has, 9999-12-31T23:59
        # -05:00 after the last: "since the beginning" and "nothing yet".
        edge = datetime.min if moment.year == 1 else datetime.max
        return edge.replace(tzinfo=UTC)


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


@extend_schema_field({"type": "string", "format": "date-time",
                      "description": "ISO 8601 (a date alone is its midnight UTC); inclusive"})
class SinceParam(serializers.CharField):
    def to_internal_value(self, data) -> datetime:  # type: ignore[override]
        moment = parse_since(str(data))
        if moment is None:
            raise serializers.ValidationError(
                "Use an ISO 8601 timestamp, such as 2026-11-22T10:04:05.123Z."
            )
        return moment


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


def invalid_parameter(details: dict[str, str]) -> ServiceError:
    names = ", ".join(sorted(details))
    return ServiceError("invalid_parameter", f"Invalid query parameter: {names}.", details=details)


def validated(serializer_class, query) -> dict:
    # A plain dict: with the QueryDict DRF takes "since=" for "no since".
    serializer = serializer_class(data=query.dict() if hasattr(query, "dict") else query)
    if not serializer.is_valid():
        raise invalid_parameter(flatten_details(serializer.errors))
    return serializer.validated_data
