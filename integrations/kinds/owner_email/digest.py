"""The hourly digest of owner notifications.

A form's first 20 notifications of a clock hour go out one by one; the rest of that hour are
held, and go out together as one email when the hour ends. A held delivery waits in the
outbox (pending, its next attempt at the hour's end, which the sweeper that beat runs picks
up): the first of them tried after the hour sends the digest of all, the others find it sent.
So the digest has the outbox's retries and failure alerts, and the ledger shows each held
submission pending until its digest is out.

Which notifications went alone is decided once per submission (an OwnerNotice row) under the
lock of the form's hour (an OwnerDigest row), so concurrent workers and retries agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction

from core import clock
from forms_app.models import Form
from integrations.kinds.base import Outcome
from integrations.kinds.owner_email import mail
from integrations.models import Integration, OwnerDigest, OwnerNotice
from submissions.models import Status, Submission

ALONE_PER_HOUR = 20
HOUR = timedelta(hours=1)
SENDING_LEASE = timedelta(seconds=30)  # a digest being sent; then another worker may try
HELD_ERROR = "Held for the hourly digest: over 20 notifications for this form this hour"
KEPT_FOR = timedelta(days=2)


@dataclass(frozen=True)
class Plan:
    alone: bool
    digest_id: int | None  # None: the submission or its form was deleted meanwhile


def hour_of(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def hold(integration: Integration, data: dict[str, Any]) -> Outcome | None:
    """None when this submission's notification goes alone; else the outcome of holding it
    for, or sending, its hour's digest."""
    submitted = datetime.fromisoformat(data["submittedAt"])
    plan = _plan(data["formId"], data["id"], hour_of(submitted))
    if plan.alone or plan.digest_id is None:
        return None
    return _deliver(integration, plan.digest_id)


@transaction.atomic
def _plan(form_id: str, submission_id: str, hour: datetime) -> Plan:
    if not _parents_held(form_id, submission_id):
        # Deleted while it was being delivered: its delivery went with it, so whatever this
        # attempt does is not recorded; nothing is counted for a form that is gone.
        return Plan(alone=True, digest_id=None)
    OwnerDigest.objects.get_or_create(form_id=form_id, hour=hour)
    digest = OwnerDigest.objects.select_for_update().get(form_id=form_id, hour=hour)
    notice = OwnerNotice.objects.filter(submission_id=submission_id).first()
    if notice is None:
        alone = OwnerNotice.objects.filter(form_id=form_id, hour=hour, held=False).count()
        # Once the digest is out, a late one (a backlog, an outage) goes alone.
        held = alone >= ALONE_PER_HOUR and digest.sent_at is None
        notice = OwnerNotice.objects.create(
            submission_id=submission_id, form_id=form_id, hour=hour, held=held)
    return Plan(alone=not notice.held, digest_id=digest.pk)


def _parents_held(form_id: str, submission_id: str) -> bool:
    """Hold the submission and then its form, first and in the order a delete takes them
    (docs/exactness.md, "Lock order"); whether both are still there. The rows written below
    point at both, and their foreign-key checks at commit would take the two after the
    hour's lock: a form's delete holding the form and waiting for the hour's row made a
    cycle. Not FOR UPDATE: stores and the feed's sequencer go on beside it."""
    held = Submission.objects.select_for_update(no_key=True).filter(pk=submission_id)
    if not list(held.values_list("pk")):
        return False
    return bool(list(Form.objects.select_for_update(no_key=True).filter(pk=form_id)
                     .values_list("pk")))


def _deliver(integration: Integration, digest_id: int) -> Outcome:
    now = clock.now()
    claimed = _claim(digest_id, now)
    if claimed is None:
        return Outcome(True)  # the digest with this submission in it is out
    if isinstance(claimed, timedelta):
        return Outcome(False, error=HELD_ERROR, retry_after=claimed.total_seconds(),
                       held=True)
    outcome = mail.send(digest_message(integration, claimed))
    done = {"sent_at": now} if outcome.ok else {}
    OwnerDigest.objects.filter(pk=digest_id).update(sending_until=None, **done)
    return outcome


@transaction.atomic
def _claim(digest_id: int, now: datetime) -> OwnerDigest | timedelta | None:
    """The digest to send now, or how long to wait first, or None when it has been sent."""
    digest = OwnerDigest.objects.select_for_update().get(pk=digest_id)
    if digest.sent_at is not None:
        return None
    if now < digest.hour + HOUR:
        return digest.hour + HOUR - now
    if digest.sending_until is not None and digest.sending_until > now:
        return SENDING_LEASE  # another worker is sending it
    digest.sending_until = now + SENDING_LEASE
    digest.save(update_fields=["sending_until"])
    return digest


def digest_message(integration: Integration, digest: OwnerDigest):
    held = Submission.objects.filter(
        pk__in=OwnerNotice.objects.filter(form_id=digest.form_id, hour=digest.hour, held=True)
        .values("submission_id"),
        status=Status.INBOX,
    ).select_related("form").order_by("submitted_at", "id")
    form_name = integration.form.name if integration.form else ""
    start, end = digest.hour, digest.hour + HOUR
    span = f"{start:%Y-%m-%d %H:%M}-{end:%H:%M} UTC"
    parts = [
        f"{form_name} had more than {ALONE_PER_HOUR} submissions between {span}. The first "
        f"{ALONE_PER_HOUR} were emailed one by one; here are the others.",
        "",
    ]
    count = 0
    for submission in held.iterator():
        count += 1
        fields = dict(submission.data)
        parts += [f"--- {submission.submitted_at:%H:%M:%S} UTC",
                  *mail.field_lines(fields),
                  mail.submission_link(str(digest.form_id), str(submission.pk)), ""]
    parts.append(mail.settings_note())
    return mail.email(
        subject=f"New submissions: {form_name} ({count} more, {span})",
        body="\n".join(parts) + "\n",
        to=integration.owner.email,
    )


def expired_purge() -> int:
    """Hours long past say nothing any more (a notice goes with its submission too)."""
    cutoff = clock.now() - KEPT_FOR
    notices = OwnerNotice.objects.filter(hour__lt=cutoff).delete()[0]
    return notices + OwnerDigest.objects.filter(hour__lt=cutoff).delete()[0]
