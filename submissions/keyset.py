"""Keyset order of the feed: (submitted_at, position), its index's order (submissions/feed/).
Stamps never go down along positions, so this is the order of positions itself, and a ``since``
bounds the index range directly."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q


def past(moment: datetime, position: int, order: str) -> Q:
    """Rows strictly past (moment, position) in ``order`` ("asc" or "desc").

    Written as ``submitted_at <= t AND (submitted_at < t OR position < p)`` (mirrored for
    asc): the first term bounds the index range scan, the second only breaks ties at ``t``.
    """
    if order == "desc":
        return Q(submitted_at__lte=moment) & (Q(submitted_at__lt=moment) | Q(position__lt=position))
    return Q(submitted_at__gte=moment) & (Q(submitted_at__gt=moment) | Q(position__gt=position))
