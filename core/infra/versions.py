"""Version tokens in Redis for rows that web processes keep in memory.

A process that keeps a copy of a row (forms_app/form_cache.py) notes the row's token when it
reads it, and uses the copy only while Redis still holds that token. Every change of the row
sets a new token: once at the change, and again after its commit, so a process that read the
row while the change was not yet committed loses its copy too. A token that is missing (never
set, expired, Redis emptied) matches nothing, so a copy is never trusted by default.

Changes through the ORM set tokens by themselves: ``watch`` hooks a model's saves and deletes,
and ``VersionedQuerySet`` its ``update()``. Raw SQL that changes a watched row must call
``changed`` itself.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Iterable
from typing import Any

from django.db import connection, models, transaction
from django.db.models.signals import post_delete, post_save

from core.infra import redis

logger = logging.getLogger(__name__)

TOKEN_TTL_SECONDS = 24 * 3600  # an unused token goes; a copy read under it is then refetched

# Called when a token could not be set (Redis away): this process's copies cannot be trusted.
_on_lost: list[Callable[[], None]] = []


def key(model: type[models.Model], pk: Any) -> str:
    return f"formflow:version:{model._meta.db_table}:{pk}"


def changed(model: type[models.Model], pks: Iterable[Any]) -> None:
    """Rows ``pks`` of ``model`` changed (or are about to, inside a transaction)."""
    keys = [key(model, pk) for pk in pks]
    if not keys or redis.client() is None:
        return
    _renew(keys)
    if connection.in_atomic_block:
        transaction.on_commit(lambda: _renew(keys))


def _renew(keys: list[str]) -> None:
    client = redis.client()
    if client is None:
        return
    try:
        with client.pipeline(transaction=False) as pipe:
            for name in keys:
                pipe.set(name, secrets.token_hex(8), ex=TOKEN_TTL_SECONDS)
            pipe.execute()
    except redis.Unavailable as error:
        # Other processes keep their copies until those expire (their MAX_AGE); this one
        # drops its own now.
        redis.failed(error, "renewing version tokens")
        for forget in _on_lost:
            forget()


def read(client, keys: list[str]) -> list[str] | None:
    """The tokens of ``keys``, set first where missing: one round trip. None if one expired
    in between. Raises redis.Unavailable."""
    with client.pipeline(transaction=False) as pipe:
        for name in keys:
            pipe.set(name, secrets.token_hex(8), nx=True, ex=TOKEN_TTL_SECONDS)
        pipe.mget(keys)
        tokens = pipe.execute()[-1]
    if not all(tokens):
        return None
    return [token.decode() for token in tokens]


def on_lost(forget: Callable[[], None]) -> None:
    _on_lost.append(forget)


class VersionedQuerySet(models.QuerySet):
    """``update()`` sets new tokens for the rows it changes (one more query, for their ids)."""

    def update(self, **kwargs: Any) -> int:
        pks = list(self.values_list("pk", flat=True))
        count = super().update(**kwargs)
        changed(self.model, pks)
        return count

    update.alters_data = True  # type: ignore[attr-defined]


def watch(model: type[models.Model]) -> None:
    """Saves and deletes of ``model`` set new tokens (deletes by the queryset included: with a
    receiver connected, Django sends post_delete for each row)."""

    def renew(sender, instance, **_kwargs) -> None:
        changed(sender, [instance.pk])

    post_save.connect(renew, sender=model, weak=False, dispatch_uid=f"versions:{model}:save")
    post_delete.connect(renew, sender=model, weak=False, dispatch_uid=f"versions:{model}:del")
