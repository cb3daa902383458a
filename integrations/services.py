"""Integrations: making, changing and testing them. Delivery is integrations/delivery/'s."""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet

from accounts.models import User
from audit.services import Target, record
from core import clock
from core.errors import ServiceError, invalid, retry_later
from core.infra import ratelimit, wallclock
from forms_app import access
from forms_app.models import Form
from forms_app.selectors import form_lookup
from forms_app.services import form_update
from integrations import kinds, selectors
from integrations.delivery.attempt import delivery_run
from integrations.kinds import google_sheets
from integrations.models import (
    CREATED,
    Delivery,
    DeliveryState,
    Integration,
)
from integrations.naming import destination
from integrations.sheet_columns import FIXED as FIXED_COLUMNS
from integrations.validation import split_config
from teams.roles import Role

logger = logging.getLogger(__name__)

UNSET: Any = object()


# --- Lifecycle ------------------------------------------------------------------------------


def audit_entry(integration: Integration, actor: User | None, verb: str,
           details: dict[str, Any] | None = None) -> None:
    """The entry names the integration by where it delivers (a host, an address), never by
    a secret of its config."""
    kind = "subscription" if integration.hook else "integration"
    # A team form's integration is in the team's log; an account-wide one in its owner's.
    team_id = integration.form.team_id if integration.form is not None else None
    record(owner_id=integration.owner_id, actor=actor, action=f"{kind}.{verb}", team_id=team_id,
           target=Target(kind, integration.pk, destination(integration)),
           details={"type": integration.type, **(details or {})})


def _owned_form(owner: User, identifier: str | None) -> Form | None:
    """A form ``owner`` may add integrations to: editor or above (403 below)."""
    if identifier is None:
        return None
    form = access.reachable(owner).filter(form_lookup(str(identifier))).first()
    if form is None:
        raise invalid({"formId": f"No form of yours is named '{identifier}'."})
    return access.check(form, Role.EDITOR)


@transaction.atomic
def integration_create(
    *, owner: User, type: str, config: Any, form_id: str | None = None,
    actor: User | None = None,
) -> Integration:
    kind = kinds.KINDS.get(type)
    if kind is None:
        raise invalid({"type": f"Choose one of {', '.join(sorted(kinds.KINDS))}."})
    if not kind.api_created:
        raise invalid({"type": f"Connect {kind.label} from the dashboard; it uses its sign-in."})
    _check_room_for_one_more(owner)
    public, secrets = split_config(kind, config)
    integration = Integration(
        owner=owner, type=type, config=public, form=_owned_form(owner, form_id),
        events=events_column(public),
    )
    integration.set_secrets({**secrets, **kind.generated()})
    integration.save()
    audit_entry(integration, actor, "created", _form_detail(integration))
    return integration


def _form_detail(integration: Integration) -> dict[str, Any]:
    return {"formId": str(integration.form_id) if integration.form_id else None}


def events_column(config: dict[str, Any]) -> str:
    """Integration.events from a config: what it lists, else submission.created alone."""
    return " ".join(config.get("events", [CREATED]))


MAX_INTEGRATIONS = 20
TEST_SENDS_PER_MINUTE = 10
TEST_SEND_DEADLINE_SECONDS = 5.0


def _check_room_for_one_more(owner: User) -> None:
    """At most 20 integrations an account: one submission must not fan out without bound.
    FOR NO KEY UPDATE: submissions being stored meanwhile check their foreign key to the owner
    without waiting (docs/exactness.md, "Lock order")."""
    User.objects.select_for_update(no_key=True).filter(pk=owner.pk).values_list("pk").get()
    if selectors.listed(owner).count() >= MAX_INTEGRATIONS:
        raise invalid(
            {"integrations": f"An account may have at most {MAX_INTEGRATIONS} integrations."}
        )


@transaction.atomic
def integration_update(
    *,
    integration: Integration,
    enabled: bool | None = None,
    config: Any = UNSET,
    form_id: Any = UNSET,
    actor: User | None = None,
) -> Integration:
    """Change what was sent; config is merged field by field, then validated whole.

    Only the changed columns are written: workers update the status columns meanwhile.
    """
    changed: list[str] = []
    sent: list[str] = []
    if config is not UNSET:
        kind = kinds.get(integration.type)
        if not isinstance(config, dict):
            raise invalid({"config": "The config must be an object."})
        if not kind.api_created:
            raise invalid({"config": f"{kind.label} settings come from its connection."})
        # Generated secrets stay out of the merge, so split_config refuses one sent here.
        generated = {k: v for k, v in integration.secrets.items() if k in kind.generated_keys}
        current = {k: v for k, v in integration.secrets.items() if k not in generated}
        public, secrets = split_config(kind, {**integration.config, **current, **config})
        integration.config = public
        integration.events = events_column(public)
        integration.set_secrets({**secrets, **generated})
        changed += ["config", "secrets_encrypted", "events"]
        sent += [f"config.{key}" for key in sorted(config)]
    if form_id is not UNSET:
        integration.form = _owned_form(actor or integration.owner, form_id)
        changed.append("form")
        sent.append("formId")
    if enabled is not None:
        integration.enabled = enabled
        changed.append("enabled")
        sent.append("enabled")
    if changed:
        integration.save(update_fields=changed)
        audit_entry(integration, actor, "changed", {"changed": sent})
    return integration


def owner_email_sync(*, form: Form) -> None:
    """The form's owner notification is on while its notifyOwner is: made the first time it
    is on (a migration made one for each form made before), turned off and on after that, so
    its deliveries stay in the ledger."""
    type = kinds.owner_email.KIND.type
    # The creator's own notification: a team's other members turn theirs on and off with
    # owner_notify_set.
    updated = Integration.objects.filter(form=form, type=type, owner_id=form.owner_id).update(
        enabled=form.notify_owner)
    if not updated and form.notify_owner:
        Integration.objects.create(owner_id=form.owner_id, form=form, type=type)


def owner_notify_set(*, form: Form, user: User, notify: bool) -> bool:
    """Whether ``user`` is emailed each submission of ``form`` (a team's form: per member;
    the creator's is the form's notifyOwner)."""
    if form.owner_id == user.pk:
        form_update(form=form, notify_owner=notify, actor=user)
        return notify
    type = kinds.owner_email.KIND.type
    updated = Integration.objects.filter(form=form, type=type, owner=user).update(
        enabled=notify)
    if not updated and notify:
        Integration.objects.create(owner=user, form=form, type=type)
    return notify


def owner_notified(*, form: Form, user: User) -> bool:
    return Integration.objects.filter(form=form, owner=user, enabled=True,
                                      type=kinds.owner_email.KIND.type).exists()


def team_reach_changed(team_id: Any, user_id: Any, actor: User | None) -> None:
    """On teams' hooks: a member removed or demoted keeps nothing the new role does not
    allow on the team's forms: no notification without a role, no subscription (REST hook)
    on a form they may no longer manage, or their key no longer reads. Each subscription
    ended is in the team's log, by ``actor``, who removed or demoted them."""
    forms = Form.objects.filter(team_id=team_id)
    gone = forms.exclude(pk__in=access.reachable(user_id).values("pk"))
    Integration.objects.filter(owner_id=user_id, form__in=gone,
                               type=kinds.owner_email.KIND.type).update(enabled=False)
    hooks = Integration.objects.filter(owner_id=user_id, hook=True, form__in=forms)
    managed = access.reachable(user_id, Role.EDITOR).values("pk")
    keyed = access.reachable(user_id, Role.ADMIN).values("pk")
    kept = Q(form__in=managed) & (Q(api_key__isnull=True) | Q(form__in=keyed))
    subscriptions_end(hooks.exclude(kept), actor, "team_role")


def subscriptions_end(subscriptions: QuerySet[Integration], actor: User | None,
                      reason: str) -> int:
    """End subscriptions (REST hooks) that a change took the reach of: a member removed or
    demoted, a key revoked, deleted or narrowed (on pullapi's hooks). Each is recorded as
    deleted, ``actor`` (who made that change) as its actor, in that change's transaction.
    How many ended."""
    ending = list(subscriptions.filter(hook=True).select_related("form"))
    for hook in ending:
        audit_entry(hook, actor, "deleted", {"reason": reason, **_form_detail(hook)})
    Integration.objects.filter(pk__in=[hook.pk for hook in ending]).delete()
    return len(ending)


def form_saved(form: Form, *, created: bool, fields: Collection[str]) -> None:
    """On forms_app's hooks (integrations/apps.py): a new form, or a change to its
    notifyOwner, keeps the owner's notification in step."""
    if created or "notify_owner" in fields:
        owner_email_sync(form=form)


@transaction.atomic
def integration_delete(*, integration: Integration, actor: User | None = None) -> None:
    audit_entry(integration, actor, "deleted")
    integration.delete()


@transaction.atomic
def integration_disable(*, integration: Integration, actor: User | None = None) -> None:
    Integration.objects.filter(pk=integration.pk).update(enabled=False)
    audit_entry(integration, actor, "changed", {"changed": ["enabled"]})


@transaction.atomic
def sheets_integration_create(
    *, owner: User, form: Form | None, tokens: dict[str, Any], spreadsheet: dict[str, Any],
    actor: User | None = None,
) -> Integration:
    integration = Integration(
        owner=owner,
        form=form,
        type=google_sheets.KIND.type,
        # create_spreadsheet has written the header of the fixed columns.
        config={**spreadsheet, "columns": list(FIXED_COLUMNS), "headerWritten": len(FIXED_COLUMNS)},
    )
    integration.set_secrets(tokens)
    integration.save()
    audit_entry(integration, actor, "created", _form_detail(integration))
    return integration


def integration_send_test(
    *, integration: Integration, actor: User | None = None
) -> tuple[bool, str]:
    """Send a sample event now, in this request; it counts for the status like any delivery.

    At most 10 a minute per account, and the request waits at most 5 s for the receiver, so
    the button can neither tie up the web server nor be used to hammer a receiver.
    """
    sends = ratelimit.Window(f"test-sends:{integration.owner_id}", 60)
    if sends.add() > TEST_SENDS_PER_MINUTE:  # counted and checked in one step
        raise retry_later(
            "rate_limited",
            f"At most {TEST_SENDS_PER_MINUTE} test sends a minute. Try again later.",
            sends.retry_after(),
        )
    now = clock.now()
    delivery = Delivery.objects.create(
        integration=integration, event_type="integration.test", next_attempt_at=now, queued_at=now
    )
    with wallclock.deadline(TEST_SEND_DEADLINE_SECONDS):
        result = delivery_run(delivery.pk)
    success = result is not None and result.state == DeliveryState.DELIVERED
    with transaction.atomic():
        audit_entry(integration, actor, "tested", {"success": success})
    if success:
        return True, "Test event delivered."
    error = result.last_error if result is not None else "could not be sent"
    return False, f"Test event failed: {error}"


# --- Encryption keys ------------------------------------------------------------------------


def raise_if_not_configured() -> None:
    from integrations.clients import google

    if not google.configured():
        raise ServiceError(
            "google_not_configured",
            "Google Sheets is not configured on this server: set GOOGLE_OAUTH_CLIENT_ID and "
            "GOOGLE_OAUTH_CLIENT_SECRET.",
            status_code=503,
        )
