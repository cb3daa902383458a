"""A page on PostgreSQL in one statement: the keyset range of the feed, and each row's JSON,
which the database writes itself (as the exports do). The web process only joins the texts:
no ORM query to compile, no model instances, no serialiser."""

from __future__ import annotations

import functools
from datetime import UTC, datetime

from django.db import connection

from pullapi.cursors import Position
from pullapi.pages import Page
from submissions.export.pg import ROW_AS_JSON
from submissions.models import Submission

# The stamp of each row as text: only the last one's is read, and text costs nothing to load.
STAMP_TEXT = """to_char(s.submitted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')"""


@functools.cache
def _page_sql(order: str, with_since: bool, with_after: bool) -> str:
    ascending = order == "asc"
    direction = "ASC" if ascending else "DESC"
    conditions = [
        "s.form_id = %s",
        "s.status = 'inbox'",
        "s.position IS NOT NULL",
    ]
    if with_since:
        conditions.append("s.submitted_at >= %s")
    if with_after:  # keyset.past(), in SQL: the first term bounds the index range scan
        bound, strict = (">=", ">") if ascending else ("<=", "<")
        conditions.append(f"s.submitted_at {bound} %s AND "
                          f"(s.submitted_at {strict} %s OR s.position {strict} %s)")
    return (
        f"SELECT {STAMP_TEXT}, s.position, {ROW_AS_JSON} "
        f"FROM {Submission._meta.db_table} s WHERE {' AND '.join(conditions)} "
        f"ORDER BY s.submitted_at {direction}, s.position {direction} LIMIT %s"
    )


def page(form_id, order: str, limit: int, since: datetime | None, after: Position | None,
         only: set[str] | None) -> Page:
    names = sorted(only) if only is not None else None
    params: list = [names, names, form_id]
    if since is not None:
        params.append(since)
    if after is not None:
        params += [after.submitted_at, after.submitted_at, after.position]
    params.append(limit + 1)
    with connection.cursor() as cursor:
        cursor.execute(_page_sql(order, since is not None, after is not None), params)
        found = cursor.fetchall()
    rows = found[:limit]
    last = None
    if rows:
        stamp, position, _ = rows[-1]
        last = Position(datetime.fromisoformat(stamp).replace(tzinfo=UTC), position)
    return Page([text for _, _, text in rows], last, len(found) > limit)
