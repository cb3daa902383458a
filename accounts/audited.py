"""Changes to an account itself (its password, its two-step sign-in), in its own audit log."""

from __future__ import annotations

from typing import Any

from accounts.models import User
from audit.services import Target, record


def account_audit(user: User, action: str, details: dict[str, Any] | None = None) -> None:
    """Made by the account's holder: a signed-in change, or a reset through their inbox."""
    record(owner_id=user.pk, actor=user, action=action,
           target=Target("account", user.pk, user.email), details=details)
