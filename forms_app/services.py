from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from accounts.models import User
from audit.services import Target, record, setting_names
from core.errors import ServiceError, invalid
from forms_app import field_rules, hooks
from forms_app.models import Form
from teams.models import Team

UPDATABLE = (
    "slug", "name", "redirect_url", "allowed_origins", "rate_limit", "honeypot_field",
    "captcha_provider", "spam_filter", "blocked_words", "retention_days", "file_uploads",
    "notify_owner", "field_rules", "allow_extra_fields",
)


def _checked_rules(rules: Any) -> list[dict[str, Any]] | None:
    """Field rules as intake reads them (submissions/intake/rules.py): every caller's, not
    only the API's, so a rule stored is always a whole one."""
    if rules is None:
        return None
    problems = field_rules.rules_problems(rules)
    if problems:
        raise invalid({f"fields.{key}" if key else "fields": text
                       for key, text in problems.items()})
    return field_rules.normalized(rules)


def _apply(form: Form, changes: dict[str, Any]) -> list[str]:
    """Set what was sent and name the columns that changed."""
    if "field_rules" in changes:
        changes = {**changes, "field_rules": _checked_rules(changes["field_rules"])}
    fields = [field for field in UPDATABLE if field in changes]
    for field in fields:
        setattr(form, field, changes[field])
    if "recaptcha_secret" in changes:
        form.set_recaptcha_secret(changes["recaptcha_secret"])
        fields.append("recaptcha_secret_encrypted")
    if {"field_rules", "honeypot_field"} & set(fields):
        _rules_on_kept_fields(form, rules_changed="field_rules" in fields)
    return fields


def _rules_on_kept_fields(form: Form, *, rules_changed: bool) -> None:
    """A rule naming a control field or the form's honeypot could never see its field (intake
    drops those before the rules run), so a required one would refuse every submission.
    Checked only when either side changes, so a form saved before this check keeps working.
    A rule on a control field is a bad rule (400); one on the honeypot conflicts with the
    other setting, which may be the stored one (409, as a taken slug)."""
    for index, rule in enumerate(form.field_rules or []):
        name, key = rule["name"], f"fields.{index}.name"
        if name in hooks.unkept_names and rules_changed:
            raise invalid({key: f"“{name}” is a control field, never kept as data, so no "
                                "rule can check it."})
        if name == form.honeypot_field:
            raise honeypot_conflict(key if rules_changed else "honeypotField", name)


def honeypot_conflict(key: str, name: str) -> ServiceError:
    message = (f"“{name}” is both the form's honeypot and a field a rule checks: a honeypot "
               "is a field no person fills, so no rule may name it.")
    return ServiceError("honeypot_conflict", message, 409, details={key: message})


def slug_taken() -> ServiceError:
    message = "Another form already has this slug."
    return ServiceError("slug_taken", message, 409, details={"slug": message})


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


API_NAMES = {"field_rules": "fields"}


def _audit(form: Form, actor: User | None, action: str, details: dict | None = None) -> None:
    record(owner_id=form.owner_id, actor=actor, action=action, team_id=form.team_id,
           target=Target("form", form.pk, form.name), details=details)


def account_of(owner: User, team: Team | None) -> User:
    """Whose limits a form counts on: its owner's, or its team's account of record's (its
    creator's, should the team have none)."""
    if team is None or team.account_of_record is None:
        return owner
    return team.account_of_record


@transaction.atomic
def form_create(*, owner: User, team: Team | None = None, actor: User | None = None,
                **values: Any) -> Form:
    form = Form(owner=owner, team=team, account=account_of(owner, team))
    fields = _apply(form, values)
    _save(form)
    hooks.saved(form, created=True, fields=fields)
    _audit(form, actor, "form.created")
    return form


@transaction.atomic
def form_update(*, form: Form, actor: User | None = None, **changes: Any) -> Form:
    # Only the changed columns, so a concurrent change to another column is never undone.
    # A new slug renews the form's version token like any change, so every web process drops
    # the copy it kept under the old slug at its next use (forms_app/form_cache.py).
    before = {field: getattr(form, field) for field in UPDATABLE}
    fields = _apply(form, changes)
    _save(form, update_fields=[*fields, "updated_at"])
    hooks.saved(form, created=False, fields=fields)
    changed = _differing(form, fields, before)
    if changed:
        _audit(form, actor, "form.changed", {"changed": setting_names(changed, API_NAMES)})
    return form


def _differing(form: Form, fields: list[str], before: dict[str, Any]) -> list[str]:
    """The columns whose values changed; a secret sent counts, as it is never compared."""
    return [field for field in fields
            if field not in before or getattr(form, field) != before[field]]


@transaction.atomic
def form_move(*, form: Form, team: Team | None, actor: User | None = None) -> Form:
    """Into a team, or back to its creator's own forms (None). Its creator stays ``owner``;
    who may reach it is forms_app/access.py's answer from now on. Recorded in the log of
    the side it left and of the side it joined."""
    left = form.team_id
    form.team = team
    form.account = account_of(form.owner, team)
    form.save(update_fields=["team", "account", "updated_at"])
    hooks.saved(form, created=False, fields=["team"])
    joined = team.pk if team else None
    details = {"from": str(left) if left else None, "to": str(joined) if joined else None}
    for side in dict.fromkeys([left, joined]):  # None is the creator's own log
        record(owner_id=form.owner_id, actor=actor, action="form.moved", team_id=side,
               target=Target("form", form.pk, form.name), details=details)
    return form


@transaction.atomic
def form_delete(*, form: Form, actor: User | None = None) -> None:
    """Deletes the form and its submissions (and their files); its public endpoint answers
    404 from now on. One transaction: the files' objects leave the store once it commits.

    The receivers of forms_app/hooks.py first hold what they own in the lock order
    (docs/exactness.md, "Deleting a form"): the form's submissions, the form's row, their
    deliveries. Then nothing new can join the form, and the cascade below deletes every row
    it has."""
    hooks.deleting(form)
    _audit(form, actor, "form.deleted")
    form.delete()
