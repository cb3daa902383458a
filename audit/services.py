"""Writing the audit log. The one writer is ``record``, called by the service that makes a
change, inside the change's transaction: the entry commits or rolls back with it. Details name
what changed (setting names, counts, a format), never a secret's value."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from audit.models import KEPT_DAYS, Entry
from core import clock

PURGE_BATCH = 500  # as the other purges: short transactions, no long lock


@dataclass(frozen=True)
class Target:
    type: str
    id: Any
    name: str = ""


class NotInTransaction(RuntimeError):
    pass


def record(*, owner_id: Any, actor: AbstractBaseUser | None, action: str, target: Target,
           details: dict[str, Any] | None = None, team_id: Any = None) -> Entry:
    """One entry in the log of the account ``owner_id`` (or, later, a team's). Refused outside
    a transaction: an entry written on its own could outlive a change that rolled back."""
    if not transaction.get_connection().in_atomic_block:
        raise NotInTransaction(f"audit.record({action!r}) outside the change's transaction")
    return Entry.objects.create(
        owner_id=owner_id, team_id=team_id,
        actor_id=actor.pk if actor is not None else None,
        actor_email=getattr(actor, "email", "") if actor is not None else "",
        action=action, target_type=target.type, target_id=str(target.id),
        target_name=str(target.name)[:200], details=details or {},
    )


def entries_purge(batch: int = PURGE_BATCH) -> int:
    """Delete entries older than 400 days, a batch at a time; how many went."""
    cutoff = clock.now() - timedelta(days=KEPT_DAYS)
    removed = 0
    while True:
        ids = list(Entry.objects.filter(at__lt=cutoff).values_list("pk", flat=True)[:batch])
        if not ids:
            return removed
        removed += Entry.objects.filter(pk__in=ids).delete()[0]


def setting_names(fields: Any, aliases: dict[str, str] | None = None) -> list[str]:
    """Model field names as the API names them (``redirect_url`` -> ``redirectUrl``); a
    secret's stored column by the setting's name (``recaptcha_secret_encrypted`` ->
    ``recaptchaSecret``); ``aliases`` for a field the API names otherwise."""
    names = []
    for field in fields:
        if aliases and field in aliases:
            names.append(aliases[field])
            continue
        head, *rest = str(field).removesuffix("_encrypted").split("_")
        name = head + "".join(part.title() for part in rest)
        if name not in names:
            names.append(name)
    return names
