"""OWNER_EMAIL: each submission that reaches a form's inbox, mailed to the owner's account
address through the operator's mail settings (Django's email backend, as account email is).

It needs nothing from the owner, so it works out of the box. Each form has one such
integration, made with the form and on while the form's ``notifyOwner`` is (forms_app's
services keep the two together); it is not listed among the owner's integrations, but its
deliveries are in the ledger like any other's, with their retries and failure alerts. Past
20 in one hour for one form, the rest of that hour waits for one digest (digest.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db.models import Q

from integrations.kinds.base import Kind, Outcome
from integrations.kinds.email import autoresponse, submitted
from integrations.kinds.owner_email import digest, mail
from integrations.models import Integration

TYPE = "OWNER_EMAIL"


def reply_to_field(integration: Integration, form_id: str) -> str:
    """The field that holds the submitter's address: the one the form's Email integration
    autoresponds to, else ``email``."""
    configs = Integration.objects.filter(
        Q(form_id=form_id) | Q(form__isnull=True), owner_id=integration.owner_id, type="EMAIL",
        enabled=True,
    ).values_list("config", flat=True)
    for config in configs:
        if config.get("autoresponseEmailField"):
            return str(config["autoresponseEmailField"])
    return autoresponse.DEFAULT_FIELD


def message(integration: Integration, event: dict[str, Any]):
    data = event["data"]
    body = "\n".join([
        f"New submission to {mail.one_line(data['formName'])} at {data['submittedAt']}",
        "",
        *mail.field_lines(data["fields"]),
        "",
        f"See it in your dashboard: {mail.submission_link(data['formId'], data['id'])}",
        mail.settings_note(),
        "",
    ])
    field = reply_to_field(integration, data["formId"])
    return mail.email(
        subject=submitted.subject(event) or f"New submission: {data['formName']}",
        body=body,
        to=integration.owner.email,
        reply_to=submitted.reply_to(data["fields"], field),
    )


def transport(integration: Integration, event: dict[str, Any], msg_id: str) -> Outcome:
    if event["type"] == "submission.created":
        held = digest.hold(integration, event["data"])
        if held is not None:
            return held
    return mail.send(message(integration, event))


KIND = Kind(
    type=TYPE,
    label="Owner email",
    transport=transport,
    schema_out={"type": "object", "title": "OwnerEmailConfigOut", "properties": {}},
    folder=Path(__file__).parent,
)
