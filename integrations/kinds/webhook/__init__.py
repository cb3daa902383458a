"""WEBHOOK: each event POSTed as JSON to the owner's URL, signed the Standard Webhooks way.
REST hook subscriptions (integrations/hooks/) are webhooks too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django import forms

from core import clock
from integrations.clients import webhook
from integrations.kinds.base import ConfigForm, Kind, Outcome, http_outcome, optional_text
from integrations.models import CREATED, EVENT_TYPES
from integrations.validation import event_errors, url_errors

URL = {"type": "string", "format": "uri", "maxLength": 2000, "description": "https:// only"}
EVENTS = {
    "type": "array",
    "items": {"type": "string", "enum": list(EVENT_TYPES)},
    "minItems": 1,
    "uniqueItems": True,
    "default": [CREATED],
    "description": "the events it receives",
}


def transport(integration, event: dict[str, Any], msg_id: str) -> Outcome:
    body = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
    result = webhook.send(
        url=integration.config["url"],
        secret=integration.secrets["signingSecret"],
        msg_id=msg_id,
        timestamp=int(clock.now().timestamp()),
        body=body,
    )
    return http_outcome(result, disable_on=(410,))


def errors(config: dict[str, Any]) -> dict[str, str]:
    return {
        **url_errors(config, "url", "Enter the HTTPS URL that receives the webhooks."),
        **event_errors(config.get("events"), "config.events"),
    }


class WebhookForm(ConfigForm):
    url = optional_text(2000)
    events = forms.MultipleChoiceField(
        choices=[(event, event) for event in EVENT_TYPES], required=False,
        widget=forms.CheckboxSelectMultiple,
    )

    def config(self) -> dict[str, Any]:
        # A card sent without the boxes (an older page) asks for the default.
        config = super().config()
        if not config["events"]:
            del config["events"]
        return config


KIND = Kind(
    type="WEBHOOK",
    label="Webhook",
    transport=transport,
    folder=Path(__file__).parent,
    keys=frozenset({"url", "events"}),
    defaults={"events": [CREATED]},
    errors=errors,
    generated=lambda: {"signingSecret": webhook.new_signing_secret()},
    generated_keys=frozenset({"signingSecret"}),
    schema_in={"type": "object", "title": "WebhookConfig",
               "properties": {"url": URL, "events": EVENTS}, "required": ["url"]},
    schema_out={
        "type": "object",
        "title": "WebhookConfigOut",
        "properties": {
            "url": URL,
            "events": EVENTS,
            "signingSecret": {
                "type": "string", "description": "whsec_…; present only in the create response",
            },
        },
        "required": ["url", "events"],
    },
    form=WebhookForm,
)
