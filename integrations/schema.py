"""OpenAPI shapes of the integration config: each kind's own, from the registry."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from integrations.kinds import KINDS


def _partial(schema: dict[str, Any]) -> dict[str, Any]:
    optional = {key: value for key, value in schema.items() if key != "required"}
    return {**optional, "title": f"{schema['title']}Patch"}


CONFIG_IN = [kind.schema_in for kind in KINDS.values() if kind.schema_in is not None]
CONFIG_OUT = {"oneOf": [kind.schema_out for kind in KINDS.values()]}


@extend_schema_field({"oneOf": CONFIG_IN})
class ConfigInField(serializers.JSONField):
    """The config of a create request, by ``type``."""


@extend_schema_field({"oneOf": [_partial(schema) for schema in CONFIG_IN]})
class ConfigPatchField(serializers.JSONField):
    """Config keys to change; the rest are kept."""
