"""OpenAPI shapes of the per-type integration config (validation itself is in validation.py)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


def _object(title: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "title": title, "properties": properties, "required": required}


URL = {"type": "string", "format": "uri", "maxLength": 2000, "description": "https:// only"}
SUBJECT = {"type": "string", "maxLength": 200}
API_KEY = {"type": "string", "maxLength": 500, "writeOnly": True}
FROM = {"type": "string", "description": 'An address, optionally "Name <address>"'}
TO = {"type": "string", "format": "email"}

WEBHOOK_IN = _object("WebhookConfig", {"url": URL}, ["url"])
EMAIL_IN = _object(
    "EmailConfig",
    {"apiKey": API_KEY, "fromEmail": FROM, "toEmail": TO, "subject": SUBJECT},
    ["apiKey", "fromEmail", "toEmail"],
)
WEBHOOK_OUT = _object(
    "WebhookConfigOut",
    {
        "url": URL,
        "signingSecret": {
            "type": "string",
            "description": "whsec_…; present only in the create response",
        },
    },
    ["url"],
)
EMAIL_OUT = _object(
    "EmailConfigOut",
    {
        "apiKey": {"type": "string", "description": "Masked, except in the create response"},
        "fromEmail": FROM,
        "toEmail": TO,
        "subject": SUBJECT,
    },
    ["apiKey", "fromEmail", "toEmail"],
)
SHEETS_OUT = _object(
    "GoogleSheetsConfig",
    {
        "spreadsheetId": {"type": "string"},
        "spreadsheetUrl": {"type": "string"},
        "columns": {"type": "array", "items": {"type": "string"}},
        "headerWritten": {"type": "integer"},
    },
    ["spreadsheetId", "columns"],
)


def _partial(schema: dict[str, Any]) -> dict[str, Any]:
    optional = {key: value for key, value in schema.items() if key != "required"}
    return {**optional, "title": f"{schema['title']}Patch"}


@extend_schema_field({"oneOf": [WEBHOOK_IN, EMAIL_IN]})
class ConfigInField(serializers.JSONField):
    """The config of a create request, by ``type``."""


@extend_schema_field({"oneOf": [_partial(WEBHOOK_IN), _partial(EMAIL_IN)]})
class ConfigPatchField(serializers.JSONField):
    """Config keys to change; the rest are kept."""


CONFIG_OUT = {"oneOf": [WEBHOOK_OUT, EMAIL_OUT, SHEETS_OUT]}
