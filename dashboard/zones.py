"""The owner's time zone: what the dashboard shows times and search days in."""

from __future__ import annotations

from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

from django.db import transaction

from accounts.audited import account_audit
from accounts.models import User

UTC = ZoneInfo("UTC")


@lru_cache(maxsize=1)
def zone_names() -> list[str]:
    return sorted(name for name in available_timezones() if "/" in name or name == "UTC")


def is_zone(name: str) -> bool:
    return name in zone_names()


def zone_of(user: User | None) -> ZoneInfo:
    """The owner's zone; UTC until one is set (or if the stored one is no longer known)."""
    name = getattr(user, "time_zone", "") or ""
    return ZoneInfo(name) if is_zone(name) else UTC


def time_zone_set(*, user: User, name: str, only_if_unset: bool = False) -> bool:
    """Store the owner's zone; with ``only_if_unset`` (the browser's guess on a first visit)
    an owner's own choice is kept. Whether it was stored."""
    if only_if_unset and user.time_zone:
        return False
    chosen = name if is_zone(name) else "UTC"
    changed = chosen != user.time_zone
    with transaction.atomic():
        user.time_zone = chosen
        user.save(update_fields=["time_zone"])
        # The owner's own choice is in the account's log; the browser's guess is not theirs.
        if changed and not only_if_unset:
            account_audit(user, "account.changed", {"changed": ["timeZone"]})
    return True
