"""Serializer fields that take JSON types as they are (contract, "Input limits").

DRF coerces: a number sent for a string is stored as its text, and ``"yes"`` or ``1`` pass as
``true``. A client with a bug then stores what it never meant, and learns nothing. These fields
take a string only from a JSON string, a boolean only from ``true`` or ``false``, and an
integer only from a JSON integer. Query parameters (always text) keep DRF's own fields.
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
    pass


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
