"""Formspree's JSON dialect, spoken beside the contract's own keys on every JSON answer of the
public endpoint, so ``@formspree/core``, ``@formspree/ajax`` and ``@formspree/react`` work with
only their ``endpoint`` changed (contract, "Drop-in").

Their success check wants a string ``next``; their error check wants ``errors: [{code,
message, field?}]`` and shows ``message`` to the visitor, so each one is a sentence.
"""

from __future__ import annotations

from typing import Any

from core.errors import ServiceError

# The request headers Formspree's clients send, which a preflight must allow.
CLIENT_HEADERS = ("Formspree-Client", "Formspree-Session-Data")

# The endpoint's error codes in Formspree's words; any other is UNSPECIFIED. (A file sent to a
# form without uploads is kept as its placeholder, never refused, so NO_FILE_UPLOADS is not
# answered; the spam filter holds, never refuses, so BLOCKED names no spam verdict.)
FORM_CODES = {
    "form_not_found": "FORM_NOT_FOUND",
    "empty_submission": "EMPTY",
    "monthly_limit_reached": "INACTIVE",
    "origin_not_allowed": "BLOCKED",
    "rate_limited": "BLOCKED",
    "captcha_failed": "BLOCKED",
    "file_too_large": "FILES_TOO_BIG",
    "storage_quota_exceeded": "FILES_TOO_BIG",
    "too_many_files": "TOO_MANY_FILES",
}
UNSPECIFIED = "UNSPECIFIED"
# A field's problem that reads on from its name ("is larger than 1000 bytes").
_VERB_STARTS = ("is ", "contains ", "holds ")


def errors(error: ServiceError) -> list[dict[str, Any]]:
    """The error as Formspree's list: one entry for the whole form, then one per field the
    error names (its ``details``), each with a sentence a visitor can read."""
    code = FORM_CODES.get(error.code, UNSPECIFIED)
    found: list[dict[str, Any]] = [{"code": code, "message": error.message}]
    for field, problem in (error.details or {}).items():
        found.append({"code": code, "field": field, "message": _sentence(field, problem)})
    return found


def _sentence(field: str, problem: Any) -> str:
    text = str(problem).strip().rstrip(".")
    if text.startswith(_VERB_STARTS):
        text = f"{field} {text}"
    return f"{text[:1].upper()}{text[1:]}."
