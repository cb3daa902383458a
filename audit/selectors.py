"""Reading the audit log: newest first, a page at a time, after a signed cursor that holds the
last entry's (at, id) and the log it was made for."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet

from audit.models import Entry
from core.cursors import CursorError, sign, unsign

SALT = "formflow.audit.cursor"


@dataclass(frozen=True)
class Page:
    entries: list[Entry]
    next_cursor: str | None

    @property
    def has_more(self) -> bool:
        return self.next_cursor is not None


def entries_of(owner: Any) -> QuerySet[Entry]:
    """The account's own log: its forms and its account (a team's log is not in it)."""
    return Entry.objects.filter(owner=owner, team_id__isnull=True).select_related("actor")


def entries_of_team(team_id: Any) -> QuerySet[Entry]:
    """A team's log: its forms (and what hangs from them) and its members."""
    return Entry.objects.filter(team_id=team_id).select_related("actor")


def encode(log: str, entry: Entry) -> str:
    return sign([log, entry.at.isoformat(), str(entry.pk)], salt=SALT)


def decode(token: str, log: str) -> tuple[datetime, uuid.UUID]:
    values = unsign(token, salt=SALT)
    try:
        bound, moment, ident = values
        place = datetime.fromisoformat(moment), uuid.UUID(ident)
    except (ValueError, TypeError, AttributeError):
        raise CursorError("The cursor is not valid.") from None
    if bound != log:
        raise CursorError("The cursor belongs to another log.")
    return place


def page(entries: QuerySet[Entry], *, log: str, limit: int, cursor: str | None = None,
         action: str | None = None, since: datetime | None = None) -> Page:
    """``limit`` entries, newest first. ``action`` is a code (``form.changed``) or a family
    (``form``); ``since`` is inclusive. A bad cursor raises CursorError."""
    if action:
        entries = entries.filter(Q(action=action) | Q(action__startswith=f"{action}."))
    if since is not None:
        entries = entries.filter(at__gte=since)
    if cursor:
        at, ident = decode(cursor, log)
        entries = entries.filter(Q(at__lt=at) | Q(at=at, id__lt=ident))
    rows = list(entries.order_by("-at", "-id")[:limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(rows, encode(log, rows[-1]) if more else None)
