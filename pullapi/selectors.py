from __future__ import annotations

from datetime import datetime

from forms_app.models import Form
from pullapi.cursors import Position
from submissions import horizon, keyset
from submissions.models import Submission


def submissions_page(
    form: Form,
    *,
    order: str,
    limit: int,
    since: datetime | None = None,
    after: Position | None = None,
) -> tuple[list[Submission], bool]:
    """One page in keyset order and whether more rows follow. No OFFSET: any depth is cheap.

    Only rows below the commit horizon are served, so a row that commits late can never land
    behind a cursor already handed out (submissions/horizon.py).
    """
    rows = horizon.settled(Submission.inbox.filter(form=form), horizon.committed_before())
    if since is not None:
        rows = rows.filter(submitted_at__gte=since)
    if after is not None:
        rows = rows.filter(keyset.past(after.submitted_at, after.submission_id, order))
    ordering = ["submitted_at", "id"] if order == "asc" else ["-submitted_at", "-id"]
    page = list(rows.order_by(*ordering)[: limit + 1])
    return page[:limit], len(page) > limit
