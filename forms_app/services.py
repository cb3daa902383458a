from __future__ import annotations

from typing import Any

from django.db import transaction

from accounts.models import User
from forms_app import hooks
from forms_app.models import Form

UPDATABLE = (
    "name", "redirect_url", "allowed_origins", "rate_limit", "honeypot_field", "captcha_provider",
    "spam_filter", "blocked_words", "retention_days", "file_uploads", "notify_owner",
    "field_rules", "allow_extra_fields",
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


@transaction.atomic
def form_create(*, owner: User, **values: Any) -> Form:
    form = Form(owner=owner)
    fields = _apply(form, values)
    form.save()
    hooks.saved(form, created=True, fields=fields)
    return form


@transaction.atomic
def form_update(*, form: Form, **changes: Any) -> Form:
    # Only the changed columns, so a concurrent change to another column is never undone.
    fields = _apply(form, changes)
    form.save(update_fields=[*fields, "updated_at"])
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
