from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from pullapi.cursors import Position
from pullapi.models import ApiKey
from pullapi.pages import Page, backends
from submissions import feed


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
    row placed later lands past every cursor already handed out (submissions/feed/).
    """
    feed.catch_up()
    return backends.reader()(form_id, order, limit, since, after, only)


def api_keys_of(owner) -> QuerySet[ApiKey]:
    """An account's API keys, newest first, with the forms each was given and their teams."""
    return ApiKey.objects.filter(owner=owner).prefetch_related("forms__team").order_by(
        "-created_at")
