"""Hands one event to one integration and says what happened, in one shape for all types."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.utils.html import escape

from config import clock
from integrations import sheet_columns
from integrations.clients import email_provider, google, webhook
from integrations.models import Integration, IntegrationType
from submissions.representation import field_text


@dataclass(frozen=True)
class Outcome:
    ok: bool
    status_code: int | None = None
    error: str | None = None
    retry_after: float | None = None
    permanent: bool = False  # no retry will help
    disable: bool = False  # the receiver asked never to be called again (410 Gone)
    secrets: dict[str, Any] | None = None  # refreshed credentials to store


def _webhook(integration: Integration, event: dict[str, Any], msg_id: str) -> Outcome:
    body = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
    result = webhook.send(
        url=integration.config["url"],
        secret=integration.secrets["signingSecret"],
        msg_id=msg_id,
        timestamp=int(clock.now().timestamp()),
        body=body,
    )
    if result.status_code == 410:
        return Outcome(
            False, 410, "HTTP 410 Gone: integration disabled", permanent=True, disable=True
        )
    return Outcome(result.ok, result.status_code, result.error, result.retry_after)


def _reply_to(fields: dict[str, Any]) -> str | None:
    address = fields.get("email")
    if not isinstance(address, str):
        return None
    try:
        validate_email(address)
    except ValidationError:
        return None
    return address


def email_message(integration: Integration, event: dict[str, Any]) -> dict[str, Any]:
    data = event["data"]
    fields = data["fields"]
    subject = integration.config.get("subject") or f"New submission: {data['formName']}"
    lines = [f"{name}: {field_text(value)}" for name, value in fields.items()]
    rows = "".join(
        f'<tr><th align="left">{escape(name)}</th><td>{escape(field_text(value))}</td></tr>'
        for name, value in fields.items()
    )
    message: dict[str, Any] = {
        "from": integration.config["fromEmail"],
        "to": [integration.config["toEmail"]],
        "subject": subject,
        "text": f"New submission to {data['formName']} at {data['submittedAt']}\n\n"
        + "\n".join(lines),
        "html": f"<p>New submission to <strong>{escape(data['formName'])}</strong> at "
        f"{escape(data['submittedAt'])}</p><table>{rows}</table>",
    }
    reply_to = _reply_to(fields)
    if reply_to:
        message["reply_to"] = reply_to
    return message


def _email(integration: Integration, event: dict[str, Any], msg_id: str) -> Outcome:
    result = email_provider.send(
        api_key=integration.secrets["apiKey"], message=email_message(integration, event)
    )
    if result.ok:
        return Outcome(True, result.status_code)
    code = result.status_code
    retryable = code is None or code == 429 or code >= 500
    error = result.error if code is None else email_provider.provider_message(result)
    return Outcome(False, code, error, result.retry_after, permanent=not retryable)


def sheet_row(columns: list[str], event: dict[str, Any]) -> list[str]:
    data = event["data"]
    fields = data["fields"]
    return [
        data["submittedAt"],
        data["id"],
        *(field_text(fields.get(name)) for name in columns[2:]),
    ]


def _sheets(integration: Integration, event: dict[str, Any], msg_id: str) -> Outcome:
    tokens = google.Tokens.from_dict(integration.secrets)
    creds = google.credentials(tokens)
    spreadsheet_id = integration.config["spreadsheetId"]
    columns, written = sheet_columns.reserve(integration.pk, event["data"]["fields"])
    try:
        google.refresh_if_expired(creds)
        if written < len(columns):
            # Names sit at fixed positions, so writing this delivery's list from A1 leaves
            # any longer header another delivery wrote meanwhile intact.
            google.write_header(creds, spreadsheet_id=spreadsheet_id, header=columns)
            sheet_columns.header_confirm(integration.pk, len(columns))
        google.append_row(creds, spreadsheet_id=spreadsheet_id, row=sheet_row(columns, event))
    except google.GoogleError as error:
        return Outcome(False, error.status_code, str(error), permanent=error.permanent)
    refreshed = google.Tokens.from_credentials(creds)
    secrets = refreshed.as_dict() if refreshed.token != tokens.token else None
    return Outcome(True, 200, secrets=secrets)


TRANSPORTS = {
    IntegrationType.WEBHOOK: _webhook,
    IntegrationType.EMAIL: _email,
    IntegrationType.GOOGLE_SHEETS: _sheets,
}


def deliver(integration: Integration, event: dict[str, Any], msg_id: str) -> Outcome:
    return TRANSPORTS[integration.type](integration, event, msg_id)
