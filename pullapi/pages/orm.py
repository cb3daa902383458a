"""A page through the ORM, each row shaped by submissions/representation.py."""

from __future__ import annotations

import json
from datetime import datetime

from pullapi.cursors import Position
from pullapi.pages import Page
from submissions import keyset
from submissions.models import Submission
from submissions.representation import submission_json


def page(form_id, order: str, limit: int, since: datetime | None, after: Position | None,
         only: set[str] | None) -> Page:
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
