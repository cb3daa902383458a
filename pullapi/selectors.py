from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from forms_app.models import Form
from pullapi.cursors import Position
from submissions.models import Submission


def _after(position: Position, order: str) -> Q:
    """Rows strictly past ``position`` in keyset order (submitted_at, id).

    Written as ``submitted_at <= t AND (submitted_at < t OR id < i)`` (mirrored for asc):
    the first term bounds the index range scan, the second only breaks ties at ``t``.
    """
    moment, ident = position.submitted_at, position.submission_id
    if order == "desc":
        return Q(submitted_at__lte=moment) & (Q(submitted_at__lt=moment) | Q(id__lt=ident))
    return Q(submitted_at__gte=moment) & (Q(submitted_at__gt=moment) | Q(id__gt=ident))


def submissions_page(
    form: Form,
    *,
    order: str,
    limit: int,
    since: datetime | None = None,
    after: Position | None = None,
) -> tuple[list[Submission], bool]:
    """One page in keyset order and whether more rows follow. No OFFSET: any depth is cheap."""
    rows = Submission.objects.filter(form=form)
    if since is not None:
        rows = rows.filter(submitted_at__gte=since)
    if after is not None:
        rows = rows.filter(_after(after, order))
    ordering = ["submitted_at", "id"] if order == "asc" else ["-submitted_at", "-id"]
    page = list(rows.order_by(*ordering)[: limit + 1])
    return page[:limit], len(page) > limit
