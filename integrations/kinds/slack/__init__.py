"""SLACK: each submission posted to a channel through a Slack incoming webhook.

Submitted text can never mention or link: Slack reads ``<!channel>``, ``<@U123>`` and
``<https://…|text>`` as markup, so ``&``, ``<`` and ``>`` are escaped, as Slack documents; link
previews are off.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from integrations.kinds import chat

TEXT_LIMIT = 3000  # characters in one text block
PARTIAL_ENTITY = re.compile(r"&[a-z]*$")


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _whole_entities(text: str) -> str:
    return PARTIAL_ENTITY.sub("", text)


def message(event: dict[str, Any]) -> dict[str, Any]:
    title = f"New submission to {escape(event['data']['formName'])}"
    fields = "\n".join(chat.lines(event, escape)) or "(no fields)"
    return {
        "text": chat.cut(title, TEXT_LIMIT, keep_whole=_whole_entities),
        "blocks": [
            {"type": "section", "text": {
                "type": "mrkdwn",
                "text": chat.cut(f"*{title}*", TEXT_LIMIT, keep_whole=_whole_entities)}},
            {"type": "section", "text": {
                "type": "mrkdwn",
                "text": chat.cut(fields, TEXT_LIMIT, keep_whole=_whole_entities)}},
        ],
        "unfurl_links": False,
        "unfurl_media": False,
    }


KIND = chat.kind("SLACK", "Slack", message, Path(__file__).parent)
