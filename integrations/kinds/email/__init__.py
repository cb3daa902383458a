"""EMAIL: each submission mailed to the owner through the operator's email provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.utils.html import escape

from core.text import CONTROL_CHARACTERS, email_address_error, has_control_characters
from integrations.clients import email_provider
from integrations.kinds.base import ConfigForm, Kind, Outcome, optional_text
from integrations.kinds.email import autoresponse, submitted
from submissions.representation import field_text

SUBJECT = {"type": "string", "maxLength": 200}
AUTORESPONSE = {
    "type": "object",
    "nullable": True,
    "description": "Mailed to the address in autoresponseEmailField of each delivered "
    "submission, at most once an hour per address; null turns it off",
    "properties": {
        "subject": {"type": "string", "minLength": 1, "maxLength": 200},
        "text": {"type": "string", "minLength": 1, "maxLength": 5000},
    },
    "required": ["subject", "text"],
}
EMAIL_FIELD = {"type": "string", "minLength": 1, "maxLength": 100, "default": "email"}
FROM = {"type": "string", "description": 'An address, optionally "Name <address>"'}
TO = {"type": "string", "format": "email"}


def message(integration, event: dict[str, Any]) -> dict[str, Any]:
    data = event["data"]
    fields = data["fields"]
    # The owner's own subject first; then the page's _subject; then the default.
    subject = (integration.config.get("subject") or submitted.subject(event)
               or f"New submission: {data['formName']}")
    lines = [f"{name}: {field_text(value)}" for name, value in fields.items()]
    rows = "".join(
        f'<tr><th align="left">{escape(name)}</th><td>{escape(field_text(value))}</td></tr>'
        for name, value in fields.items()
    )
    mail: dict[str, Any] = {
        "from": integration.config["fromEmail"],
        "to": [integration.config["toEmail"]],
        "subject": subject,
        "text": f"New submission to {data['formName']} at {data['submittedAt']}\n\n"
        + "\n".join(lines),
        "html": f"<p>New submission to <strong>{escape(data['formName'])}</strong> at "
        f"{escape(data['submittedAt'])}</p><table>{rows}</table>",
    }
    reply_to = submitted.reply_to(fields, autoresponse.DEFAULT_FIELD)
    if reply_to:
        mail["reply_to"] = reply_to
    return mail


def transport(integration, event: dict[str, Any], msg_id: str) -> Outcome:
    result = email_provider.send(
        api_key=integration.secrets["apiKey"], message=message(integration, event)
    )
    if result.ok:
        autoresponse.send(integration, event)
        return Outcome(True, result.status_code)
    code = result.status_code
    retryable = code is None or code == 429 or code >= 500
    error = result.error if code is None else email_provider.provider_message(result)
    return Outcome(False, code, error, result.retry_after, permanent=not retryable)


def errors(config: dict[str, Any]) -> dict[str, str]:
    found = {}
    api_key = config.get("apiKey")
    if not isinstance(api_key, str) or not api_key.strip() or len(api_key) > 500:
        found["config.apiKey"] = "Enter the email provider's API key."
    for key, named in (("fromEmail", True), ("toEmail", False)):
        problem = email_address_error(config.get(key), display_name_allowed=named)
        if problem:
            found[f"config.{key}"] = problem
    subject = config.get("subject")
    if subject is not None and (not isinstance(subject, str) or len(subject) > 200):
        found["config.subject"] = "The subject must be text of at most 200 characters."
    elif has_control_characters(subject):
        found["config.subject"] = CONTROL_CHARACTERS
    return {**found, **autoresponse.errors(config)}


class EmailForm(ConfigForm):
    apiKey = optional_text(500)
    fromEmail = optional_text(400)
    toEmail = optional_text(254)
    subject = optional_text(200)
    autoresponseSubject = optional_text(200)
    autoresponseText = optional_text(5000)
    autoresponseEmailField = optional_text(100)

    def config(self) -> dict[str, Any]:
        """The card's fields in the API's shape: an empty subject or autoresponse is none."""
        values = self.cleaned_data
        config: dict[str, Any] = {key: values[key] for key in ("apiKey", "fromEmail", "toEmail")}
        if values["subject"]:
            config["subject"] = values["subject"]
        if values["autoresponseText"]:
            config["autoresponse"] = {"subject": values["autoresponseSubject"],
                                      "text": values["autoresponseText"]}
            config["autoresponseEmailField"] = (
                values["autoresponseEmailField"] or autoresponse.DEFAULT_FIELD)
        return config


KIND = Kind(
    type="EMAIL",
    label="Email",
    transport=transport,
    folder=Path(__file__).parent,
    keys=frozenset({"apiKey", "fromEmail", "toEmail", "subject", "autoresponse",
                    "autoresponseEmailField"}),
    secret_keys=frozenset({"apiKey"}),
    errors=errors,
    schema_in={
        "type": "object",
        "title": "EmailConfig",
        "properties": {
            "apiKey": {"type": "string", "maxLength": 500, "writeOnly": True},
            "fromEmail": FROM, "toEmail": TO, "subject": SUBJECT,
            "autoresponse": AUTORESPONSE, "autoresponseEmailField": EMAIL_FIELD,
        },
        "required": ["apiKey", "fromEmail", "toEmail"],
    },
    schema_out={
        "type": "object",
        "title": "EmailConfigOut",
        "properties": {
            "apiKey": {"type": "string", "description": "Masked, except in the create response"},
            "fromEmail": FROM, "toEmail": TO, "subject": SUBJECT,
            "autoresponse": AUTORESPONSE, "autoresponseEmailField": EMAIL_FIELD,
        },
        "required": ["apiKey", "fromEmail", "toEmail"],
    },
    form=EmailForm,
)
