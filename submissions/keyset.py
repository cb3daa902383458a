"""Keyset order of an owner's submissions: (submitted_at, id), the composite index's order."""

from __future__ import annotations

import uuid
from datetime import datetime

from django.db.models import Q


def past(moment: datetime, ident: uuid.UUID, order: str) -> Q:
    """Rows strictly past (moment, ident) in ``order`` ("asc" or "desc").

    Written as ``submitted_at <= t AND (submitted_at < t OR id < i)`` (mirrored for asc):
    the first term bounds the index range scan, the second only breaks ties at ``t``.
    """
    if order == "desc":
        return Q(submitted_at__lte=moment) & (Q(submitted_at__lt=moment) | Q(id__lt=ident))
    return Q(submitted_at__gte=moment) & (Q(submitted_at__gt=moment) | Q(id__gt=ident))
