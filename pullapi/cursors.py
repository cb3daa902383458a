"""Opaque, signed keyset cursors, bound to the form and the order they were made for."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.core import signing

SALT = "formflow.pullapi.cursor"


class CursorError(ValueError):
    pass


@dataclass(frozen=True)
class Position:
    submitted_at: datetime
    submission_id: uuid.UUID


def encode(*, form_id: uuid.UUID, order: str, position: Position) -> str:
    payload = [
        str(form_id),
        order,
        position.submitted_at.isoformat(),
        str(position.submission_id),
    ]
    return signing.dumps(payload, salt=SALT, compress=True)


def decode(token: str, *, form_id: uuid.UUID, order: str) -> Position:
    try:
        bound_form, bound_order, moment, submission_id = signing.loads(token, salt=SALT)
        position = Position(datetime.fromisoformat(moment), uuid.UUID(submission_id))
    except (signing.BadSignature, ValueError, TypeError):
        raise CursorError("The cursor is not valid.") from None
    if bound_form != str(form_id):
        raise CursorError("The cursor belongs to another form.")
    if bound_order != order:
        raise CursorError(f"The cursor was made for order={bound_order}.")
    return position
