from __future__ import annotations

import functools
import time
import uuid
from typing import Any

from django.core.cache import cache
from django.db import transaction

from accounts.models import User
from audit.services import Target, record
from core import clock
from core.errors import ServiceError
from core.infra import rawsql, redis
from files.models import StoredFile
from forms_app import access
from forms_app.models import Form
from forms_app.selectors import form_lookup
from pullapi import hooks, keys
from pullapi.models import READ, SCOPES, ApiKey
from teams.models import Membership
from teams.roles import Role

LAST_USED_RESOLUTION_SECONDS = 60


def _owned_forms(owner: User, identifiers: list[str]) -> list[Form]:
    """The forms a key may read: the maker's own, and their teams' where they are admin."""
    forms = []
    for identifier in identifiers:
        form = access.reachable(owner).filter(form_lookup(identifier)).first()
        if form is None:
            raise ServiceError(
                "validation_error",
                "Some fields are not valid.",
                details={"forms": f"No form of yours is named '{identifier}'."},
            )
        access.check(form, Role.ADMIN)
        if form not in forms:
            forms.append(form)
    return forms


def _scopes(asked: Any) -> str:
    """The key's scopes in their fixed order: ``read`` always, ``hooks`` when asked for."""
    if not isinstance(asked, list) or any(scope not in SCOPES for scope in asked):
        raise ServiceError(
            "validation_error",
            "Some fields are not valid.",
            details={"scopes": f"Give a list of scopes among {', '.join(SCOPES)}."},
        )
    return " ".join(scope for scope in SCOPES if scope == READ or scope in asked)


def _audit(api_key: ApiKey, actor: User | None, action: str, details: dict[str, Any]) -> None:
    """The key by its name and id; never its value, which only its maker ever sees."""
    record(owner_id=api_key.owner_id, actor=actor, action=action,
           target=Target("api_key", api_key.pk, api_key.name), details=details)


@transaction.atomic
def api_key_create(
    *, owner: User, name: str, forms: list[str], scopes: Any = (READ,),
    actor: User | None = None,
) -> tuple[ApiKey, str]:
    """Create a key and return it with its plain value, which is never available again."""
    granted = _scopes(list(scopes) if isinstance(scopes, tuple) else scopes)
    allowed = _owned_forms(owner, forms)
    plain = keys.generate()
    api_key = ApiKey.objects.create(
        owner=owner, name=name, prefix=keys.display_prefix(plain), key_hash=keys.digest(plain),
        scopes=granted,
    )
    api_key.forms.set(allowed)
    _audit(api_key, actor, "api_key.created",
           {"forms": [str(form.pk) for form in allowed], "scopes": granted.split()})
    return api_key, plain


@transaction.atomic
def api_key_revoke(*, api_key: ApiKey, actor: User | None = None) -> None:
    """Revoke at once: the next request with the key is refused (every lookup hits the DB),
    and the REST hook subscriptions made with it end."""
    revoked = ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(
        revoked_at=clock.now())
    ended = hooks.subscriptions_end(api_key.hooks.all(), actor, "api_key_revoked")
    if revoked:
        _audit(api_key, actor, "api_key.revoked", {"subscriptionsEnded": ended})


@transaction.atomic
def api_key_forms_changed(*, api_key: ApiKey, actor: User | None = None) -> int:
    """After a key's forms changed (the admin): the subscriptions made with it on a form it no
    longer holds end, as revoking it ends them all; a key reaches only its own forms, and a
    subscription must not go on delivering a form the key cannot read. How many ended."""
    held = api_key.forms.filter(pk__in=access.reachable(api_key.owner_id, Role.ADMIN)).values(
        "pk")
    return hooks.subscriptions_end(api_key.hooks.exclude(form_id__in=held), actor,
                                   "api_key_forms_changed")


@transaction.atomic
def api_key_deleting(*, api_key: ApiKey, actor: User | None = None) -> int:
    """Before an operator deletes a key (the admin; owners revoke): its subscriptions end,
    each recorded, as a revoke ends them, rather than going unrecorded with the key's row."""
    return hooks.subscriptions_end(api_key.hooks.all(), actor, "api_key_deleted")


# On every request of a sync.
LIVE_KEY = rawsql.OwnedRow(
    ApiKey, {"id", "owner_id", "name", "prefix", "revoked_at", "scopes"},
    {"id", "email", "is_active"},
    where="t.key_hash = %s AND t.revoked_at IS NULL",
)


def api_key_for(plain: str) -> ApiKey | None:
    """The live key with this value, with its (active) owner; None for any other value."""
    if not keys.is_well_formed(plain):
        return None
    return LIVE_KEY.get(keys.digest(plain))


# When this process last recorded each key's use: most requests need not ask the cache.
_touched: dict = {}


def api_key_touch(*, api_key: ApiKey) -> None:
    """Record use at most once a minute per key, so reads do not each cost a write."""
    now = time.monotonic()
    if now - _touched.get(api_key.pk, -LAST_USED_RESOLUTION_SECONDS) < LAST_USED_RESOLUTION_SECONDS:
        return
    if len(_touched) > 10_000:  # keys seen long ago: forget rather than grow
        _touched.clear()
    _touched[api_key.pk] = now
    name = f"pull:last-used:{api_key.pk}"
    # While the shared cache is away, a write more is no harm.
    due = redis.guarded(lambda: cache.add(name, 1, LAST_USED_RESOLUTION_SECONDS), True,
                        "recording a key's use")
    if due:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=clock.now())


@functools.cache
def _readable_sql(by_id: bool) -> str:
    # A key reads only forms its maker may make keys for now, whatever was attached to it
    # (an operator in the admin, a form that changed hands, a member removed or demoted):
    # their own, and their teams' where they are admin or owner. forms_app/access.py's
    # reachable(user, "admin") in SQL; tests/teams/test_api_keys.py holds the two equal.
    forms = ApiKey.forms.through._meta
    members = Membership._meta
    # Whether its submissions carry files (files/selectors.py), in the same round trip.
    files = (f"(f.file_uploads IS NOT NULL OR EXISTS (SELECT 1 FROM "
             f"{StoredFile._meta.db_table} s WHERE s.form_id = f.id))")
    return (
        f"SELECT f.id, {files} FROM {Form._meta.db_table} f "
        f"JOIN {forms.db_table} a ON a.form_id = f.id "
        f"JOIN {ApiKey._meta.db_table} k ON k.id = a.apikey_id "
        f"WHERE a.apikey_id = %s AND f.{'id' if by_id else 'slug'} = %s "
        f"AND ((f.team_id IS NULL AND k.owner_id = f.owner_id) OR EXISTS (SELECT 1 FROM "
        f"{members.db_table} m WHERE m.team_id = f.team_id AND m.user_id = k.owner_id "
        f"AND m.role IN ('{Role.ADMIN.value}', '{Role.OWNER.value}')))"
    )


def readable_form(*, api_key: ApiKey, identifier: str) -> tuple[Any, bool] | None:
    """The id of the form named by ``identifier`` (its id or slug) if the key may read it,
    and whether its submissions carry ``files``."""
    if "\x00" in identifier:  # no slug holds one, and PostgreSQL refuses it as a parameter
        return None
    try:
        value, by_id = rawsql.db_id(Form, uuid.UUID(identifier)), True
    except ValueError:
        value, by_id = identifier, False
    rows = rawsql.fetch(_readable_sql(by_id), [rawsql.db_id(ApiKey, api_key.pk), value],
                        (Form._meta.pk,))  # the flag needs no converter
    return (rows[0][0], bool(rows[0][1])) if rows else None


def readable_form_id(*, api_key: ApiKey, identifier: str):
    found = readable_form(api_key=api_key, identifier=identifier)
    return found[0] if found else None
