from __future__ import annotations

from django.db.models import F, QuerySet

from accounts.models import User
from core.infra import rawsql
from forms_app import access
from forms_app.access import form_lookup as form_lookup  # where the other apps find it
from forms_app.models import Form


def forms_of(user: User) -> QuerySet[Form]:
    """Every form the user has a role on (their own and their teams'), newest first, each
    with the role as ``caller_role``; each counts its folders when asked."""
    return access.reachable(user).order_by("-created_at")


def forms_with_role(user: User, needed: str) -> QuerySet[Form]:
    """The forms on which ``user`` has at least the ``needed`` role, each with its team:
    one's own first, then each team's, newest first within each."""
    return access.reachable(user, needed).select_related("team").order_by(
        F("team__name").asc(nulls_first=True), "team_id", "-created_at")


# The public endpoint's one lookup, on every submission. Built once from the models' metadata:
# compiling the same ORM query on every request cost a quarter of the endpoint's CPU.
PUBLIC_FORM = rawsql.OwnedRow(
    Form,
    {
        "id", "owner_id", "team_id", "account_id", "slug", "name", "redirect_url",
        "allowed_origins", "rate_limit",
        "honeypot_field", "captcha_provider", "recaptcha_secret_encrypted", "spam_filter",
        "blocked_words", "field_names", "file_uploads", "field_rules", "allow_extra_fields",
    },
    {"id", "monthly_submission_limit", "spam_marks"},
    where="t.slug = %s",
    owner="account",
    owner_column="COALESCE(t.account_id, t.owner_id)",  # Form.counted_on
)


def public_form(slug: str) -> Form | None:
    """The form at a public endpoint, with what intake reads of its account (the owner, or
    the team's account of record); None if there is none, or that account was deactivated
    (the form is then gone to the public too)."""
    if "\x00" in slug:  # no slug holds one, and PostgreSQL refuses it as a parameter
        return None
    return PUBLIC_FORM.get(slug)
