"""What the chat kinds (Slack, Discord) share: one message per submission, naming the form and
listing every field as ``name: value``, posted as JSON to the incoming-webhook URL the owner
pasted (a secret: anyone holding it can post to the channel, so it is shown masked)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from integrations.clients import http
from integrations.kinds.base import ConfigForm, Kind, Outcome, http_outcome, optional_text
from integrations.validation import url_errors
from submissions.representation import field_text

ELLIPSIS = "…"


def lines(event: dict[str, Any], escape) -> list[str]:
    """Every field, then a link per stored file: the link is the service's own signed URL,
    so it is left as it is; the file's name, submitted text, is escaped."""
    fields = event["data"]["fields"]
    shown = [f"{escape(name)}: {escape(field_text(value))}" for name, value in fields.items()]
    files = [f"{escape(item['name'])}: {item['url']}" for item in event["data"].get("files", [])]
    return shown + files


def cut(text: str, limit: int, *, keep_whole=None) -> str:
    """``text`` in at most ``limit`` characters, ending in … when cut. ``keep_whole`` finds a
    broken escape at the cut (an HTML entity, a backslash) so none is left half."""
    if len(text) <= limit:
        return text
    head = text[: limit - len(ELLIPSIS)]
    if keep_whole is not None:
        head = keep_whole(head)
    return head + ELLIPSIS


def post(integration, payload: dict[str, Any]) -> Outcome:
    """404 or 410: the channel or its webhook was deleted; the integration is turned off."""
    body = json.dumps(payload, ensure_ascii=False).encode()
    result = http.post(
        integration.secrets["webhookUrl"],
        data=body,
        headers={"Content-Type": "application/json", "User-Agent": http.USER_AGENT},
    )
    return http_outcome(result, disable_on=(404, 410))


def url_problem(config: dict[str, Any]) -> dict[str, str]:
    return url_errors(config, "webhookUrl", "Enter the incoming webhook's HTTPS URL.")


URL_IN = {"type": "string", "format": "uri", "maxLength": 2000, "writeOnly": True,
          "description": "The incoming webhook's https:// URL"}
URL_OUT = {"type": "string",
           "description": "Masked to its last 4 characters, except in the create response"}


class ChatForm(ConfigForm):
    webhookUrl = optional_text(2000)


def kind(type: str, label: str, message: Callable[[dict[str, Any]], dict[str, Any]],
         folder: Path) -> Kind:
    """A chat kind: its config is the one secret URL; ``message`` shapes a submission."""

    def transport(integration, event: dict[str, Any], msg_id: str) -> Outcome:
        return post(integration, message(event))

    url = frozenset({"webhookUrl"})
    return Kind(
        type=type,
        label=label,
        transport=transport,
        folder=folder,
        keys=url,
        secret_keys=url,
        errors=url_problem,
        schema_in={"type": "object", "title": f"{label}Config",
                   "properties": {"webhookUrl": URL_IN}, "required": ["webhookUrl"]},
        schema_out={"type": "object", "title": f"{label}ConfigOut",
                    "properties": {"webhookUrl": URL_OUT}, "required": ["webhookUrl"]},
        form=ChatForm,
    )
