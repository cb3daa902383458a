from __future__ import annotations

from django.core.cache import cache
from django.db import transaction

from accounts.models import User
from config import clock, redis
from config.errors import ServiceError
from forms_app.models import Form
from forms_app.selectors import form_lookup
from pullapi import keys
from pullapi.models import ApiKey

LAST_USED_RESOLUTION_SECONDS = 60


def _owned_forms(owner: User, identifiers: list[str]) -> list[Form]:
    forms = []
    for identifier in identifiers:
        form = Form.objects.filter(form_lookup(identifier), owner=owner).first()
        if form is None:
            raise ServiceError(
                "validation_error",
                "Some fields are not valid.",
                details={"forms": f"No form of yours is named '{identifier}'."},
            )
        if form not in forms:
            forms.append(form)
    return forms


@transaction.atomic
def api_key_create(*, owner: User, name: str, forms: list[str]) -> tuple[ApiKey, str]:
    """Create a key and return it with its plain value, which is never available again."""
    allowed = _owned_forms(owner, forms)
    plain = keys.generate()
    api_key = ApiKey.objects.create(
        owner=owner, name=name, prefix=keys.display_prefix(plain), key_hash=keys.digest(plain)
    )
    api_key.forms.set(allowed)
    return api_key, plain


def api_key_revoke(*, api_key: ApiKey) -> None:
    """Revoke at once: the next request with the key is refused (every lookup hits the DB)."""
    ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=clock.now())


def api_key_for(plain: str) -> ApiKey | None:
    if not keys.is_well_formed(plain):
        return None
    return (
        ApiKey.objects.select_related("owner")
        .filter(key_hash=keys.digest(plain), revoked_at__isnull=True, owner__is_active=True)
        .first()
    )


def api_key_touch(*, api_key: ApiKey) -> None:
    """Record use at most once a minute per key, so reads do not each cost a write."""
    try:
        due = cache.add(f"pull:last-used:{api_key.pk}", 1, LAST_USED_RESOLUTION_SECONDS)
    except redis.Unavailable:  # the shared cache is away: a write more is no harm
        due = True
    if due:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=clock.now())


def readable_form(*, api_key: ApiKey, identifier: str) -> Form | None:
    return Form.objects.filter(form_lookup(identifier), api_keys=api_key).first()
