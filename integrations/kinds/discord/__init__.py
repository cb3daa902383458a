"""DISCORD: each submission posted to a channel through a Discord webhook.

Submitted text can never mention or link: the message allows no mentions
(``allowed_mentions: {parse: []}``), Markdown is escaped so no masked link ``[text](url)`` or
formatting gets through, and link previews are suppressed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from integrations.kinds import chat

CONTENT_LIMIT = 2000
SUPPRESS_EMBEDS = 1 << 2
MARKDOWN = re.compile(r"([\\*_~`|>#\[\]()<:-])")
HALF_ESCAPE = re.compile(r"(?<!\\)\\$")


def escape(text: str) -> str:
    return MARKDOWN.sub(r"\\\1", text)


def _whole_escapes(text: str) -> str:
    return HALF_ESCAPE.sub("", text)


def message(event: dict[str, Any]) -> dict[str, Any]:
    title = f"**New submission to {escape(event['data']['formName'])}**"
    content = "\n".join([title, *chat.lines(event, escape)])
    return {
        "content": chat.cut(content, CONTENT_LIMIT, keep_whole=_whole_escapes),
        "allowed_mentions": {"parse": []},
        "flags": SUPPRESS_EMBEDS,
    }


KIND = chat.kind("DISCORD", "Discord", message, Path(__file__).parent)
