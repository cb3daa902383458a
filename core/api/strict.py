"""Serializer fields that take JSON types as they are (contract, "Input limits").

DRF coerces: a number sent for a string is stored as its text, and ``"yes"`` or ``1`` pass as
``true``. A client with a bug then stores what it never meant, and learns nothing. These fields
take a string only from a JSON string, a boolean only from ``true`` or ``false``, and an
integer only from a JSON integer. Query parameters are always text: their numbers keep DRF's
own fields, their text takes CharField below for the way it measures length.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


def _wrong_type(expected: str) -> serializers.ValidationError:
    return serializers.ValidationError(f"Must be {expected}.", code="invalid")


class _TextOnly:
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            raise _wrong_type("a string")
        return super().to_internal_value(data)  # type: ignore[misc]


class CharField(_TextOnly, serializers.CharField):
    """Its length bounds the text as sent, as the schema's maxLength does; DRF measures it
    after trimming, so a long value padded with spaces would pass for a short one."""

    def to_internal_value(self, data: Any) -> str:
        if isinstance(data, str) and self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)


class EmailField(_TextOnly, serializers.EmailField):
    pass


class ChoiceField(_TextOnly, serializers.ChoiceField):
    pass


class BooleanField(serializers.BooleanField):
    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            raise _wrong_type("true or false")
        return data


class IntegerField(serializers.IntegerField):
    def to_internal_value(self, data: Any) -> int:
        # bool is an int in Python; JSON's true is not a number.
        if isinstance(data, bool) or not isinstance(data, int):
            raise _wrong_type("an integer")
        return super().to_internal_value(data)


class StrictSerializer(serializers.Serializer):
    """Rejects keys it does not know, so a typo never passes silently."""

    ignored_keys: set[str] = set()

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = set(data) - set(self.fields) - self.ignored_keys
            if unknown:
                raise serializers.ValidationError(
                    {key: "Unknown field." for key in sorted(unknown)}
                )
        return super().to_internal_value(data)
