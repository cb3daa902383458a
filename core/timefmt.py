from datetime import UTC, datetime

from rest_framework import serializers


def iso(value: datetime | None) -> str | None:
    """ISO 8601 UTC with milliseconds and Z, as every API response shows time."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TimestampField(serializers.DateTimeField):
    def to_representation(self, value: datetime | None) -> str | None:  # type: ignore[override]
        return iso(value)
