"""The control fields of hosted form services, honoured so their pages work unchanged
(contract, "Drop-in"), and never stored, delivered or exported as data.

Pages written for Formspree, Basin, Getform, FormSubmit, Web3Forms, Static Forms or Netlify
carry hidden inputs that steer the service: where to send the browser next, a honeypot, the
mail's subject, and settings a visitor must never control here (``_cc`` would let anyone make
this server mail anyone). The reply-to fields stay data: the visitor typed them.
"""

from __future__ import annotations

import re
from typing import Any

from forms_app.models import Form
from forms_app.origins import URL_PATTERN, origin_of_url
from submissions.intake import captcha

# Where the browser goes after an HTML post; the first one sent wins.
REDIRECT_FIELDS = ("_next", "_redirect", "redirect", "redirectTo")
# Honeypots on every form, beside the owner's own honeypotField.
HONEYPOT_FIELDS = frozenset({"_gotcha", "_honey", "botcheck", "bot-field"})
SUBJECT_FIELD = "_subject"
SUBJECT_LIMIT = 200
# Settings of other services: dropped, with no effect (the CAPTCHA tokens have their own check).
IGNORED_FIELDS = frozenset({
    "_cc", "_template", "_captcha", "_autoresponse", "_webhook", "_blacklist", "access_key",
    "apikey", "accessKey", "form-name",
})
# Every name never kept as data, whatever the form; the owner's honeypotField comes on top.
HIDDEN = frozenset(
    {*REDIRECT_FIELDS, *HONEYPOT_FIELDS, SUBJECT_FIELD, *IGNORED_FIELDS, *captcha.TOKEN_FIELDS}
)

_SAFE_URL = re.compile(URL_PATTERN)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def visible(data: list[list], form: Form) -> list[list]:
    """The fields to keep: without control fields, CAPTCHA tokens and the honeypot."""
    own = form.honeypot_field
    return [pair for pair in data if pair[0] not in HIDDEN and pair[0] != own]


def caught(fields: dict[str, Any], form: Form) -> bool:
    """A honeypot holds something: a bot filled a field no person sees."""
    names = (*HONEYPOT_FIELDS, form.honeypot_field) if form.honeypot_field else HONEYPOT_FIELDS
    return any(fields.get(name) not in (None, "", []) for name in names)


def subject(data: list[list]) -> str:
    """``_subject`` as a mail header may hold it: no control character (a CR or LF would
    start a header of the visitor's choosing), at most SUBJECT_LIMIT characters; "" if none."""
    value = next((value for name, value in data if name == SUBJECT_FIELD), None)
    if not isinstance(value, str):
        return ""
    return " ".join(_CONTROL.sub(" ", value).split())[:SUBJECT_LIMIT]


def requested_redirect(data: list[list]) -> str | None:
    """The address the page asked the browser to be sent to, not yet judged."""
    sent = {name: value for name, value in data if name in REDIRECT_FIELDS}
    for name in REDIRECT_FIELDS:
        value = sent.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def safe_redirect(requested: str | None, page_origin: str, form: Form) -> str | None:
    """``requested`` if the visitor may be sent there, else None (the form's own redirect
    applies): an absolute http(s) URL with no user part, no backslash and no control
    character (the pattern the form's redirectUrl must match), on the origin of the page
    that posted, of the form's redirectUrl, or of one of its allowedOrigins. Anything else
    would make this server an open redirect for whoever can post to a form."""
    if requested is None or len(requested) > 2000 or not _SAFE_URL.fullmatch(requested):
        return None
    target = origin_of_url(requested)
    if target is None:
        return None
    trusted = {page_origin, *form.allowed_origins}
    if form.redirect_url:
        trusted.add(origin_of_url(form.redirect_url) or "")
    trusted.discard("")
    return requested if target in trusted else None
