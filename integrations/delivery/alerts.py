"""Telling the owner when an integration fails for good (contract, "Notifications and the
delivery ledger"): a delivery used all its attempts, or the integration was turned off because
its destination is gone (404/410) or its Google grant was revoked.

The email goes to the account's address and names the integration, the form and the last
error; at most one per integration per 24 h, decided by one conditional UPDATE, so two workers
failing at once send one. It is sent by a task, after the delivery is recorded.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Q

from accounts import mailer
from core import clock
from integrations import kinds
from integrations.delivery import messages
from integrations.models import Integration

QUIET_FOR = timedelta(hours=24)


def failed_for_good(integration: Integration, *, form_name: str, error: str | None,
                    disabled: bool) -> bool:
    """Queue the owner's alert unless one went out for this integration in the last 24 h.

    A REST hook answered 410 is not a failure: its subscriber has gone and it is deleted."""
    if integration.hook and disabled:
        return False
    now = clock.now()
    due = Q(alerted_at__isnull=True) | Q(alerted_at__lt=now - QUIET_FOR)
    if not Integration.objects.filter(due, pk=integration.pk).update(alerted_at=now):
        return False
    messages.alert_owner(integration.pk, form_name, error or "unknown error", disabled)
    return True


def send(integration_id, form_name: str, error: str, disabled: bool) -> None:
    """The alert's email (the task's work, after the delivery is recorded)."""
    integration = Integration.objects.select_related("owner").filter(pk=integration_id).first()
    if integration is None:
        return  # deleted meanwhile: nobody to tell about it
    mailer.send(**message(integration, form_name, error, disabled))


def message(integration: Integration, form_name: str, error: str, disabled: bool) -> dict:
    label = kinds.get(integration.type).label
    what = (
        "It has been turned off: its destination is gone or its access was taken back. "
        "Fix it, then enable it again."
        if disabled
        else "A submission's delivery used all its attempts and will not be tried again "
        "unless you retry it."
    )
    body = (
        f"Your {label} integration for {form_name} failed.\n\n"
        f"{what}\n\n"
        f"Last error: {error}\n\n"
        f"See it, and retry failed deliveries, at {settings.BASE_URL}/dashboard/integrations\n\n"
        "You get at most one such email a day for each integration.\n"
    )
    return {"subject": f"FormFlow: your {label} integration for {form_name} failed",
            "body": body, "to": integration.owner.email}
