"""Query parameters of list endpoints (the pull API's, the audit log's), validated into one
400 ``invalid_parameter`` shape."""

from __future__ import annotations

from datetime import UTC, datetime, time

from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.errors import ServiceError, flatten_details


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


def invalid_parameter(details: dict[str, str]) -> ServiceError:
    names = ", ".join(sorted(details))
    return ServiceError("invalid_parameter", f"Invalid query parameter: {names}.", details=details)


def validated(serializer_class, query) -> dict:
    # A plain dict: with the QueryDict DRF takes "since=" for "no since".
    serializer = serializer_class(data=query.dict() if hasattr(query, "dict") else query)
    if not serializer.is_valid():
        raise invalid_parameter(flatten_details(serializer.errors))
    return serializer.validated_data
