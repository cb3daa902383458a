"""Autoresponse: the owner's own text, mailed to the address a submission gave.

The text is the owner's alone: no submitted value is put into it, so a stranger cannot make
the form mail someone else their words. At most one per recipient per form per hour (one row
per pair; a conditional update or a unique insert decides, so two workers agree), never for a
test send, and never for spam: a held submission is not delivered at all. It rides on the
owner's notification: if that was sent, the autoresponse is tried once, and its failure does
not fail (and so resend) the notification.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction

from core import clock
from core.text import CONTROL_CHARACTERS, has_control_characters
from integrations.clients import email_provider
from integrations.models import AutoresponseSent

logger = logging.getLogger(__name__)

ONCE_PER = timedelta(hours=1)
DEFAULT_FIELD = "email"
MAX_SUBJECT, MAX_TEXT, MAX_FIELD = 200, 5000, 100


def errors(config: dict[str, Any]) -> dict[str, str]:
    found = {}
    reply = config.get("autoresponse")
    if reply is not None:
        if not isinstance(reply, dict) or set(reply) != {"subject", "text"}:
            found["config.autoresponse"] = "Give {subject, text}, or null to turn it off."
        else:
            for key, limit in (("subject", MAX_SUBJECT), ("text", MAX_TEXT)):
                value = reply[key]
                if not isinstance(value, str) or not value.strip() or len(value) > limit:
                    found[f"config.autoresponse.{key}"] = f"Text of 1 to {limit} characters."
                elif key == "subject" and has_control_characters(value):
                    found["config.autoresponse.subject"] = CONTROL_CHARACTERS
    field = config.get("autoresponseEmailField", DEFAULT_FIELD)
    if not isinstance(field, str) or not field.strip() or len(field) > MAX_FIELD:
        found["config.autoresponseEmailField"] = f"A field name of 1 to {MAX_FIELD} characters."
    return found


def valid_address(value: Any) -> str | None:
    """``value`` if it is one plain email address, else None."""
    if not isinstance(value, str) or len(value) > 254:
        return None
    try:
        validate_email(value)
    except ValidationError:
        return None
    return value


def recipient(config: dict[str, Any], fields: dict[str, Any]) -> str | None:
    return valid_address(fields.get(config.get("autoresponseEmailField") or DEFAULT_FIELD))


def send(integration, event: dict[str, Any]) -> bool:
    """After the owner's notification of a submission: the autoresponse, if one is due."""
    config = integration.config
    reply = config.get("autoresponse")
    if not reply or event.get("type") != "submission.created":
        return False
    to = recipient(config, event["data"]["fields"])
    if to is None or not _claim(event["data"]["formId"], to):
        return False
    message = {
        "from": config["fromEmail"],
        "to": [to],
        "reply_to": config["toEmail"],  # an answer reaches the owner
        "subject": reply["subject"],
        "text": reply["text"],
    }
    result = email_provider.send(api_key=integration.secrets["apiKey"], message=message)
    if not result.ok:
        logger.warning("autoresponse of integration %s not sent: %s", integration.pk,
                       result.error)
        _release(event["data"]["formId"], to)
    return result.ok


def _key(address: str) -> str:
    return hashlib.sha256(address.strip().lower().encode()).hexdigest()


def _claim(form_id: str, address: str) -> bool:
    now, key = clock.now(), _key(address)
    rows = AutoresponseSent.objects.filter(form_id=form_id, recipient=key)
    if rows.filter(sent_at__lt=now - ONCE_PER).update(sent_at=now):
        return True
    try:
        with transaction.atomic():
            AutoresponseSent.objects.create(form_id=form_id, recipient=key, sent_at=now)
    except IntegrityError:
        return False  # one went out within the hour
    return True


def _release(form_id: str, address: str) -> None:
    AutoresponseSent.objects.filter(form_id=form_id, recipient=_key(address)).delete()


def expired_purge() -> int:
    """Rows past their hour say nothing any more."""
    cutoff = clock.now() - ONCE_PER
    return AutoresponseSent.objects.filter(sent_at__lt=cutoff).delete()[0]
