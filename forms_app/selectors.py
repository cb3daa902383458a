from __future__ import annotations

import functools
import uuid

from django.db import connection
from django.db.models import Q, QuerySet

from accounts.models import User
from config import rawsql
from forms_app.models import Form


def forms_of(user: User) -> QuerySet[Form]:
    """The user's forms, newest first; each counts its folders when asked."""
    return Form.objects.filter(owner=user).order_by("-created_at")


def form_lookup(identifier: str) -> Q:
    """A form is named by its internal id or its endpoint slug."""
    try:
        return Q(pk=uuid.UUID(identifier))
    except ValueError:
        return Q(slug=identifier)


# The public endpoint's one lookup, on every submission. Built once from the models' metadata:
# compiling the same ORM query on every request cost a quarter of the endpoint's CPU.
PUBLIC_FORM_FIELDS = rawsql.in_model_order(
    Form,
    {
        "id", "owner_id", "slug", "name", "redirect_url", "allowed_origins", "rate_limit",
        "honeypot_field", "captcha_provider", "recaptcha_secret_encrypted", "spam_filter",
        "blocked_words", "field_names",
    },
)
PUBLIC_OWNER_FIELDS = rawsql.in_model_order(User, {"id", "monthly_submission_limit", "spam_marks"})


PUBLIC_COLUMNS = tuple(Form._meta.get_field(name) for name in PUBLIC_FORM_FIELDS) + tuple(
    User._meta.get_field(name) for name in PUBLIC_OWNER_FIELDS
)


@functools.cache
def _public_form_sql() -> str:
    form, owner = Form._meta, User._meta
    columns = [f"f.{form.get_field(name).column}" for name in PUBLIC_FORM_FIELDS]
    columns += [f"u.{owner.get_field(name).column}" for name in PUBLIC_OWNER_FIELDS]
    return (
        f"SELECT {', '.join(columns)} FROM {form.db_table} f "
        f"JOIN {owner.db_table} u ON u.id = f.owner_id WHERE f.slug = %s AND u.is_active = %s"
    )


def public_form(slug: str) -> Form | None:
    """The form at a public endpoint, with what intake reads of its owner; None if there is
    none, or its owner was deactivated (the form is then gone to the public too)."""
    if "\x00" in slug:  # no slug holds one, and PostgreSQL refuses it as a parameter
        return None
    rows = rawsql.fetch(_public_form_sql(), [slug, True], PUBLIC_COLUMNS)
    if not rows:
        return None
    split = len(PUBLIC_FORM_FIELDS)
    form = Form.from_db(connection.alias, PUBLIC_FORM_FIELDS, rows[0][:split])
    form.owner = User.from_db(connection.alias, PUBLIC_OWNER_FIELDS, rows[0][split:])
    return form
