"""Opaque, signed keyset cursors, bound to the form and the order they were made for: the last
row's place in the feed, (submitted_at, position) (submissions/feed/)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from core.cursors import CursorError, sign, unsign

SALT = "formflow.pullapi.cursor"

__all__ = ["CursorError", "Position", "decode", "encode"]


@dataclass(frozen=True)
class Position:
    submitted_at: datetime
    position: int


def encode(*, form_id: uuid.UUID, order: str, position: Position) -> str:
    payload = [
        str(form_id),
        order,
        position.submitted_at.isoformat(),
        position.position,
    ]
    return sign(payload, salt=SALT)


def decode(token: str, *, form_id: uuid.UUID, order: str) -> Position:
    values = unsign(token, salt=SALT)
    try:
        bound_form, bound_order, moment, place = values
        if type(place) is not int:  # a cursor from before the feed held a row id
            raise TypeError(place)
        position = Position(datetime.fromisoformat(moment), place)
    except (ValueError, TypeError):
        raise CursorError("The cursor is not valid.") from None
    if bound_form != str(form_id):
        raise CursorError("The cursor belongs to another form.")
    if bound_order != order:
        raise CursorError(f"The cursor was made for order={bound_order}.")
    return position
