from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connection
from django.db.models import QuerySet

from pullapi.cursors import Position
from pullapi.models import ApiKey
from submissions import feed, keyset
from submissions.export import ROW_AS_JSON
from submissions.models import Submission
from submissions.representation import submission_json


@dataclass(frozen=True)
class Page:
    rows: list[str]  # each row's JSON text, in the pull API's shape
    last: Position | None  # the last row's place, where the next page starts
    has_more: bool


def submissions_page(
    form_id,
    *,
    order: str,
    limit: int,
    since: datetime | None = None,
    after: Position | None = None,
    only: set[str] | None = None,
) -> Page:
    """One page in the feed's keyset order and whether more rows follow. No OFFSET: any depth
    is cheap.

    Rows committed so far are placed in the feed first; only placed rows are served, and a
    row placed later lands past every cursor already handed out (submissions/feed.py).
    """
    feed.catch_up()
    if connection.vendor == "postgresql":
        return _pg_page(form_id, order, limit, since, after, only)
    return _orm_page(form_id, order, limit, since, after, only)


def _orm_page(form_id, order, limit, since, after, only) -> Page:
    rows = Submission.inbox.filter(form_id=form_id, position__isnull=False)
    if since is not None:
        rows = rows.filter(submitted_at__gte=since)
    if after is not None:
        rows = rows.filter(keyset.past(after.submitted_at, after.position, order))
    ordering = ["submitted_at", "position"] if order == "asc" else ["-submitted_at", "-position"]
    found = list(rows.order_by(*ordering)[: limit + 1])
    page = found[:limit]
    texts = [json.dumps(submission_json(row, only=only), ensure_ascii=False) for row in page]
    last = Position(page[-1].submitted_at, page[-1].position or 0) if page else None
    return Page(texts, last, len(found) > limit)


# On PostgreSQL a page is one statement: the keyset range of the feed, and each row's JSON,
# which the database writes itself (as the exports do). The web process only joins the texts:
# no ORM query to compile, no model instances, no serialiser. The stamp of each row as text:
# only the last one's is read, and text costs nothing to load.
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


def _pg_page(form_id, order, limit, since, after, only) -> Page:
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
    page = found[:limit]
    last = None
    if page:
        stamp, position, _ = page[-1]
        last = Position(datetime.fromisoformat(stamp).replace(tzinfo=UTC), position)
    return Page([text for _, _, text in page], last, len(found) > limit)


def api_keys_of(owner) -> QuerySet[ApiKey]:
    """An account's API keys, newest first, with the forms each may read."""
    return ApiKey.objects.filter(owner=owner).prefetch_related("forms").order_by("-created_at")
