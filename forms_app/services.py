from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from accounts.models import User
from core.errors import ServiceError
from forms_app import hooks
from forms_app.models import Form

UPDATABLE = (
    "slug", "name", "redirect_url", "allowed_origins", "rate_limit", "honeypot_field",
    "captcha_provider", "spam_filter", "blocked_words", "retention_days", "file_uploads",
    "notify_owner",
)


def _apply(form: Form, changes: dict[str, Any]) -> list[str]:
    """Set what was sent and name the columns that changed."""
    fields = [field for field in UPDATABLE if field in changes]
    for field in fields:
        setattr(form, field, changes[field])
    if "recaptcha_secret" in changes:
        form.set_recaptcha_secret(changes["recaptcha_secret"])
        fields.append("recaptcha_secret_encrypted")
    return fields


def slug_taken() -> ServiceError:
    return ServiceError("slug_taken", "Another form already has this slug.", 409)


def _save(form: Form, **options: Any) -> None:
    """Save; a chosen slug another form holds is ``slug_taken``, found by the unique index
    itself, so two owners choosing the same slug at once cannot both have it."""
    try:
        with transaction.atomic():  # a savepoint: the outer transaction survives the refusal
            form.save(**options)
    except IntegrityError:
        if Form.objects.filter(slug=form.slug).exclude(pk=form.pk).exists():
            raise slug_taken() from None
        raise


@transaction.atomic
def form_create(*, owner: User, **values: Any) -> Form:
    form = Form(owner=owner)
    fields = _apply(form, values)
    _save(form)
    hooks.saved(form, created=True, fields=fields)
    return form


@transaction.atomic
def form_update(*, form: Form, **changes: Any) -> Form:
    # Only the changed columns, so a concurrent change to another column is never undone.
    # A new slug renews the form's version token like any change, so every web process drops
    # the copy it kept under the old slug at its next use (forms_app/form_cache.py).
    fields = _apply(form, changes)
    _save(form, update_fields=[*fields, "updated_at"])
    hooks.saved(form, created=False, fields=fields)
    return form


@transaction.atomic
@transaction.atomic
def form_delete(*, form: Form) -> None:
    """Deletes the form and its submissions (and their files); its public endpoint answers
    404 from now on. One transaction: the files' objects leave the store once it commits
    (files hears of it through forms_app/hooks.py)."""
    hooks.deleting(form)
    form.delete()
