"""OpenAPI shapes of the integration config: each kind's own, from the registry."""

from __future__ import annotations

import copy
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.schema import strict_input
from integrations.kinds import KINDS


def _partial(schema: dict[str, Any]) -> dict[str, Any]:
    """A kind's config with every key optional and no other key allowed."""
    optional = copy.deepcopy({key: value for key, value in schema.items() if key != "required"})
    strict_input(optional)
    return {**optional, "title": f"{schema['title']}Patch"}


CONFIG_IN = [kind.schema_in for kind in KINDS.values() if kind.schema_in is not None]
# anyOf: two kinds (Slack, Discord) show the same shape, which oneOf would call ambiguous.
CONFIG_OUT = {"anyOf": [kind.schema_out for kind in KINDS.values()]}


def create_request() -> dict[str, Any]:
    """A create request, one shape per kind that can be created through the API: its
    ``type`` and its own config together, so a config of one kind never passes for another."""
    variants = []
    for name, kind in sorted(KINDS.items()):
        if kind.schema_in is None:
            continue
        config = copy.deepcopy(kind.schema_in)
        strict_input(config)
        variants.append({
            "type": "object",
            "title": kind.schema_in["title"].replace("Config", "Create"),
            "properties": {
                "type": {"type": "string", "enum": [name]},
                "config": config,
                "formId": {"type": "string", "maxLength": 100, "nullable": True,
                           "description": "limit it to one form (its id or slug)"},
            },
            "required": ["type", "config"],
            "additionalProperties": False,
        })
    return {"oneOf": variants}


@extend_schema_field({"oneOf": CONFIG_IN})
class ConfigInField(serializers.JSONField):
    """The config of a create request, by ``type``."""


# anyOf: every key is optional, so {} (and Slack's shape, Discord's) fits more than one kind.
@extend_schema_field({
    "anyOf": [_partial(schema) for schema in CONFIG_IN],
    "description": "Config keys to change; the rest are kept. Only the keys of the "
                   "integration's own type are taken: another type's are refused (400).",
})
class ConfigPatchField(serializers.JSONField):
    """Config keys to change; the rest are kept."""
