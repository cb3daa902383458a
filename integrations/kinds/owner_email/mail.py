"""What the owner's notification and digest emails share: header-safe text, the fields as
lines, and sending through the operator's mail settings."""

from __future__ import annotations

import smtplib
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage
from django.urls import reverse

from accounts import mailer
from integrations.kinds.base import Outcome
from submissions.representation import field_text

SUBJECT_LIMIT = 200


def one_line(text: str) -> str:
    """Header text: no control character (CR and LF above all) can start another header."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def field_lines(fields: dict[str, Any]) -> list[str]:
    return [f"{name}: {field_text(value)}" for name, value in fields.items()] or ["(no fields)"]


def submission_link(form_id: str, submission_id: str) -> str:
    return settings.BASE_URL + reverse("dashboard:submission", args=[form_id, submission_id])


def settings_note() -> str:
    return f"Turn these emails off in the form's settings: {settings.BASE_URL}/dashboard/"


def email(*, subject: str, body: str, to: str, reply_to: str | None = None) -> EmailMessage:
    return EmailMessage(
        subject=one_line(subject)[:SUBJECT_LIMIT],
        body=body,
        to=[to],
        reply_to=[reply_to] if reply_to else None,
        headers={"Auto-Submitted": "auto-generated"},
    )


def send(message: EmailMessage) -> Outcome:
    """An address the server refuses is refused on a retry too; anything else (a refused
    connection, a time-out, a busy server) may pass, and is retried."""
    try:
        mailer.send_message(message)
    except OSError as error:
        permanent = isinstance(error, smtplib.SMTPRecipientsRefused)
        return Outcome(False, error=f"Email not sent: {type(error).__name__}: {error}"[:300],
                       permanent=permanent)
    return Outcome(True)
