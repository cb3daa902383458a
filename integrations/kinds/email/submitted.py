"""What a submission's page asks of the notification mailed to the owner (contract,
"Drop-in"): a subject (``_subject``, kept beside the data) and, when the form's email field is
empty, a reply-to address from ``_replyto``, ``replyto`` or ``replyTo`` (which are data)."""

from __future__ import annotations

from typing import Any

from integrations.kinds.email.autoresponse import valid_address
from submissions.selectors import notification_subject

REPLY_TO_FIELDS = ("_replyto", "replyto", "replyTo")


def subject(event: dict[str, Any]) -> str:
    if event.get("type") != "submission.created":
        return ""
    return notification_subject(event["data"]["id"])


def reply_to(fields: dict[str, Any], email_field: str) -> str | None:
    """The form's email field when it holds anything; else the first reply-to field sent."""
    if fields.get(email_field) not in (None, "", []):
        return valid_address(fields.get(email_field))
    sent = next((fields[name] for name in REPLY_TO_FIELDS if name in fields), None)
    return valid_address(sent.strip() if isinstance(sent, str) else sent)
