"""Opaque, signed keyset cursors: a list of plain values (what a page is bound to, and the last
row's place), signed so a client can hand it back but never forge or alter one. The pull API's
(pullapi/cursors.py) and the audit log's (audit/selectors.py) are both made here."""

from __future__ import annotations

from typing import Any

from django.core import signing


class CursorError(ValueError):
    pass


def sign(values: list[Any], *, salt: str) -> str:
    return signing.dumps(values, salt=salt, compress=True)


def unsign(token: str, *, salt: str) -> list[Any]:
    try:
        values = signing.loads(token, salt=salt)
    except (signing.BadSignature, ValueError, TypeError):
        raise CursorError("The cursor is not valid.") from None
    if not isinstance(values, list):
        raise CursorError("The cursor is not valid.")
    return values
