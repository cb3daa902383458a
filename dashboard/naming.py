"""How the dashboard names things for owners: a health by a word, a delivery error as a
sentence (the raw text stays one click away), an API field as the page labels it. An
integration is named by integrations.naming.destination, as the admin names it too."""

from __future__ import annotations

import re
from dataclasses import dataclass

HEALTH_LABELS = {"healthy": "Healthy", "failing": "Failing", "never_run": "Not run yet"}


@dataclass(frozen=True)
class ShownError:
    summary: str  # what happened, for the owner
    detail: str  # the text the transport recorded, for whoever debugs it


# The transports' texts (integrations/clients/http.py, kinds) and what they mean to an owner.
ERROR_SENTENCES = [
    (re.compile(r"NameResolutionError|cannot resolve", re.I),
     "The destination's name could not be found (DNS). Check the address."),
    (re.compile(r"Connection failed|NewConnectionError|refused", re.I),
     "The destination could not be reached: nothing answered at that address."),
    (re.compile(r"timed out", re.I),
     "The destination took too long to answer, so the delivery was given up."),
    (re.compile(r"^Blocked", re.I),
     "The address points into a private network, which deliveries may not reach."),
    (re.compile(r"integration disabled", re.I),
     "The destination says it no longer exists, so the integration was turned off."),
    (re.compile(r"redirect", re.I),
     "The destination answered with a redirect; use the address it redirects to."),
    (re.compile(r"HTTP 5\d\d"),
     "The destination had an error of its own (a 5xx answer). It will be tried again."),
    (re.compile(r"HTTP 429"),
     "The destination asked us to slow down (429). It will be tried again."),
    (re.compile(r"HTTP 40[13]"),
     "The destination refused the delivery (not authorised). Check its credentials."),
    (re.compile(r"HTTP 4\d\d"),
     "The destination refused the delivery (a 4xx answer)."),
    (re.compile(r"Token (refresh|exchange) failed", re.I),
     "Google did not accept the connection any more. Connect Google Sheets again."),
    (re.compile(r"Sheets API", re.I),
     "Google Sheets could not be written to. It will be tried again."),
]


# A notification held for the hourly digest is waiting, not failing (integrations/kinds/
# owner_email/digest.py records why it waits in the same field as an error).
HELD = re.compile(r"^Held for the hourly digest", re.I)
HELD_SENTENCE = ("Held for this hour's digest: this form had over 20 notifications this hour, "
                 "so the rest go out together in one email when the hour ends. Nothing failed.")


def is_held(text: str | None) -> bool:
    return bool(text and HELD.search(text))


def shown_error(text: str | None) -> ShownError | None:
    if not text:
        return None
    if is_held(text):
        return ShownError(HELD_SENTENCE, text)
    for pattern, sentence in ERROR_SENTENCES:
        if pattern.search(text):
            return ShownError(sentence, text)
    return ShownError("The delivery failed.", text)


# The API's field names as the dashboard's pages label them, for messages about a write that
# failed (the account pages, the integration cards). The settings form labels its own.
FIELD_LABELS = {
    "email": "Email", "password": "Password", "code": "Code",
    "currentPassword": "Current password", "newPassword": "New password",
    "type": "Type", "formId": "Form", "url": "HTTPS URL", "webhookUrl": "Webhook URL",
    "apiKey": "Email provider API key", "fromEmail": "From", "toEmail": "Send notifications to",
    "subject": "Subject", "autoresponse": "Autoresponse",
    "autoresponse.subject": "Autoresponse subject", "autoresponse.text": "Autoresponse text",
    "autoresponseSubject": "Autoresponse subject", "autoresponseText": "Autoresponse text",
    "autoresponseEmailField": "Field holding their address", "name": "Name",
    "forms": "Forms it may read",
}
_INDEX = re.compile(r"(\[\d+\]|\.\d+)+$")


def field_label(key: str) -> str:
    """``config.toEmail`` -> "Send notifications to"; an unknown name in words."""
    name = _INDEX.sub("", key.removeprefix("config."))
    if name in FIELD_LABELS:
        return FIELD_LABELS[name]
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name.replace("_", " ").split(".")[-1])
    return words[:1].upper() + words[1:].lower()


def form_label(form) -> str:
    """A form where the caller picks among several, its team named: two forms of one name
    are told apart ("Contact · Team Agency", "Contact · Personal")."""
    return f"{form.name} · {f'Team {form.team.name}' if form.team_id else 'Personal'}"
