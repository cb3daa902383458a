"""Search over a form's submissions: text anywhere in their values, and a range of days.

The text is matched as a case-insensitive substring of any field's value (an address, part of
a word, a phone number), never of the field names. It has MIN_TEXT characters at least, so
that both databases always answer from a trigram index, each in its own way (backends.py).
Shorter text has no trigram to look up: it read every row of the form (0.6 s for 100,000).

Days are the owner's days, in the time zone the dashboard shows times in (UTC unless the owner
has one): ``since`` is the first day's start, ``until`` the end of the last day (exclusive).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any

from django.db import connection
from django.db.models import BooleanField, QuerySet
from django.db.models.expressions import RawSQL

from submissions.models import Submission
from submissions.search.backends import text_match

MIN_TEXT = 3
MAX_TEXT = 200


@dataclass(frozen=True)
class Search:
    text: str = ""
    since: datetime | None = None  # inclusive
    until: datetime | None = None  # exclusive
    ids: tuple[uuid.UUID, ...] = ()  # the owner's selection in the inbox; empty: any

    @classmethod
    def of(cls, text: str = "", first_day: date | None = None,
           last_day: date | None = None, zone: tzinfo = UTC,
           ids: tuple[uuid.UUID, ...] = ()) -> Search:
        """``zone`` is the one the days are in (the owner's; UTC by default)."""
        return cls(
            text=text.strip()[:MAX_TEXT],
            since=_start(first_day, zone) if first_day else None,
            # The calendar's last day has no next one: no end at all.
            until=_start(last_day + timedelta(days=1), zone) if last_day and last_day < date.max
            else None,
            ids=ids,
        )

    def __bool__(self) -> bool:
        return bool(self.text or self.since or self.until or self.ids)

    def condition(self, alias: str) -> tuple[str, list]:
        """SQL for the rows of ``alias`` (the submissions table) that match, and its
        parameters; ``TRUE`` for an empty search."""
        parts: list[str] = []
        params: list[Any] = []
        if self.text:
            sql, value = text_match()(alias, self.text)
            parts.append(sql)
            params.append(value)
        if self.since is not None:
            parts.append(f"{alias}.submitted_at >= %s")
            params.append(connection.ops.adapt_datetimefield_value(self.since))
        if self.until is not None:
            parts.append(f"{alias}.submitted_at < %s")
            params.append(connection.ops.adapt_datetimefield_value(self.until))
        if self.ids:
            parts.append(f"{alias}.id IN ({', '.join(['%s'] * len(self.ids))})")
            id_field = Submission._meta.pk
            params.extend(id_field.get_db_prep_value(ident, connection) for ident in self.ids)
        return " AND ".join(parts) or "1 = 1", params

    def applied(self, rows: QuerySet[Submission]) -> QuerySet[Submission]:
        """``rows`` narrowed to the matches: the same condition, in the ORM's query."""
        if not self:
            return rows
        sql, params = self.condition(connection.ops.quote_name(Submission._meta.db_table))
        return rows.alias(found=RawSQL(sql, params, output_field=BooleanField())).filter(
            found=True)


def _start(day: date, zone: tzinfo = UTC) -> datetime:
    return datetime.combine(day, time.min, tzinfo=zone).astimezone(UTC)
