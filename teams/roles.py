"""The four roles of a team, each including the one before."""

from __future__ import annotations

from django.db import models


class Role(models.TextChoices):
    VIEWER = "viewer"
    EDITOR = "editor"
    ADMIN = "admin"
    OWNER = "owner"


RANK = {Role.VIEWER: 1, Role.EDITOR: 2, Role.ADMIN: 3, Role.OWNER: 4}


def allows(role: str | None, needed: str) -> bool:
    """Whether ``role`` (None: no role at all) includes ``needed``."""
    return role is not None and RANK[Role(role)] >= RANK[Role(needed)]
