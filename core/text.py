"""Checks on text several apps take from people: email addresses, control characters in a
mail header, and a secret or address shown only by its last 4 characters."""

from __future__ import annotations

import unicodedata
from email.utils import parseaddr
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import validate_email

CONTROL_CHARACTERS = "Remove the control characters (such as a line break)."


def has_control_characters(value: Any) -> bool:
    """Control characters (CR and LF among them) and line or paragraph separators: in a mail
    header they would start another header (ASVS 5.2.3)."""
    return isinstance(value, str) and any(
        unicodedata.category(char) in ("Cc", "Zl", "Zp") for char in value
    )


def email_address_error(value: Any, *, display_name_allowed: bool) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "Enter an email address."
    if has_control_characters(value):
        return CONTROL_CHARACTERS
    name, address = parseaddr(value)
    if name and not display_name_allowed:
        return "Enter a plain email address."
    try:
        validate_email(address)
    except ValidationError:
        return "Enter a valid email address."
    return None


def mask(secret: str) -> str:
    return "****" + secret[-4:] if len(secret) > 4 else "****"
