"""Making, listing and ending REST hook subscriptions, and their trigger's sample."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from accounts.models import User
from core.errors import ServiceError, invalid
from forms_app import access
from forms_app.models import Form
from forms_app.selectors import form_lookup
from integrations.clients import webhook
from integrations.events import submission_event
from integrations.models import CREATED, Integration
from integrations.services import audit_entry
from integrations.validation import event_errors, url_errors
from pullapi.models import HOOKS, ApiKey
from pullapi.services import readable_form_id
from submissions.models import Submission
from teams.roles import Role

MAX_HOOKS = 50
SAMPLE_SIZE = 3


def form_not_found() -> ServiceError:
    return ServiceError("form_not_found", "No such form, or it cannot be reached here.", 404)


def missing_scope() -> ServiceError:
    return ServiceError(
        "insufficient_scope",
        f"This API key may not manage subscriptions: create one with the '{HOOKS}' scope.",
        403,
    )


def key_revoked() -> ServiceError:
    return ServiceError("authentication_failed", "The API key is invalid or has been revoked.",
                        401)


def reachable_form(*, owner: User, api_key: ApiKey | None, identifier: str) -> Form:
    """The form named by its id or slug, if the caller may reach it: a key only its own
    forms, the dashboard every form of the account; any other is 404."""
    if api_key is not None:
        form_id = readable_form_id(api_key=api_key, identifier=identifier)
        form = Form.objects.filter(pk=form_id).first() if form_id is not None else None
    else:
        form = access.reachable(owner, Role.EDITOR).filter(form_lookup(identifier)).first()
    if form is None:
        raise form_not_found()
    return form


def _checked(url: Any, events: Any) -> list[str]:
    """The subscription's input, checked by the rules of a webhook's config; its events."""
    errors = {
        name.removeprefix("config."): problem
        for name, problem in url_errors({"url": url}, "url", "Enter the HTTPS URL to call.").items()
    }
    errors.update(event_errors(events, "events"))
    if errors:
        raise invalid(errors)
    return events


@transaction.atomic
def hook_create(
    *, owner: User, api_key: ApiKey | None, url: Any, form_id: str, events: Any = None,
    actor: User | None = None,
) -> Integration:
    events = _checked(url, [CREATED] if events is None else events)
    form = reachable_form(owner=owner, api_key=api_key, identifier=form_id)
    # The owner's row orders concurrent subscriptions, so the limit holds under races.
    User.objects.select_for_update(no_key=True).filter(pk=owner.pk).values_list("pk").get()
    # The key's row, after the owner's: a revoke that commits first leaves nothing to subscribe
    # with, and one that comes later waits for this subscription and deletes it.
    if api_key is not None and not ApiKey.objects.select_for_update().filter(
            pk=api_key.pk, revoked_at__isnull=True).exists():
        raise key_revoked()
    if Integration.objects.filter(owner=owner, hook=True).count() >= MAX_HOOKS:
        raise invalid({"hooks": f"An account may have at most {MAX_HOOKS} subscriptions."})
    hook = Integration(
        owner=owner, type="WEBHOOK", hook=True, api_key=api_key, form=form,
        config={"url": url, "events": events}, events=" ".join(events),
    )
    hook.set_secrets({"signingSecret": webhook.new_signing_secret()})
    hook.save()
    audit_entry(hook, actor, "created", _made_with(hook))
    return hook


def _made_with(hook: Integration) -> dict[str, Any]:
    return {"formId": str(hook.form_id), "events": hook.config.get("events", []),
            "apiKeyId": str(hook.api_key_id) if hook.api_key_id else None}


def hooks_of(*, owner: User, api_key: ApiKey | None) -> QuerySet[Integration]:
    """A key's own subscriptions; with the dashboard's session, all of the account's."""
    hooks = Integration.objects.filter(owner=owner, hook=True)
    if api_key is not None:
        hooks = hooks.filter(api_key=api_key)
    return hooks.order_by("-created_at")


@transaction.atomic
def hook_delete(*, hook: Integration, actor: User | None = None) -> None:
    audit_entry(hook, actor, "deleted", _made_with(hook))
    hook.delete()


def hook_sample(*, form: Form) -> list[dict[str, Any]]:
    """The form's newest inbox submissions as ``submission.created`` bodies, newest first: what
    a trigger shows while it is set up."""
    newest = Submission.inbox.filter(form=form).order_by("-submitted_at", "-id")[:SAMPLE_SIZE]
    samples = []
    for submission in newest:
        submission.form = form
        samples.append(submission_event(submission))
    return samples
