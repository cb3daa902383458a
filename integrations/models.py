from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.db import models

from core import crypto
from core.ids import IdField
from forms_app.models import Form
from integrations.naming import destination
from pullapi.models import ApiKey
from submissions.models import Submission

# The events an integration can receive (contract, "Event subscriptions and erasure").
CREATED = "submission.created"
DELETED = "submission.deleted"
SPAM = "submission.spam"
EVENT_TYPES = (CREATED, DELETED, SPAM)
TEST = "integration.test"


class Health(models.TextChoices):
    HEALTHY = "healthy"
    FAILING = "failing"
    NEVER_RUN = "never_run"


class Integration(models.Model):
    id = IdField()
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="integrations"
    )
    # Null: every form of the owner.
    form = models.ForeignKey(
        Form, on_delete=models.CASCADE, null=True, blank=True, related_name="integrations"
    )
    # One of the registry's kinds (integrations/kinds/), which alone lists them.
    type = models.CharField(max_length=20)
    enabled = models.BooleanField(default=True)
    config = models.JSONField(default=dict, blank=True)
    # JSON of the secret config values, Fernet-encrypted under FIELD_ENCRYPTION_KEYS.
    secrets_encrypted = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=20, choices=Health.choices, default=Health.NEVER_RUN)
    last_run_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, null=True, blank=True)
    # When the owner was last told it failed for good (integrations/delivery/alerts.py): one
    # alert a day.
    alerted_at = models.DateTimeField(null=True, blank=True)
    # Until when its deliveries go by the slow lane (integrations/delivery/worker.py): set by
    # an attempt that took most of its deadline, cleared by a quick one (database clock).
    slow_until = models.DateTimeField(null=True, blank=True)
    # The events it receives, space-separated, so the outbox's SQL can pick the receivers of
    # an event with LIKE (no name is part of another); a WEBHOOK's config.events says the same.
    events = models.CharField(max_length=200, default=CREATED, db_default=CREATED)
    # A REST hook subscription (POST /api/v1/hooks): made by Zapier, Make or n8n, not listed
    # among the integrations, deleted by a 410 or with the key that made it.
    hook = models.BooleanField(default=False, db_default=False)
    api_key = models.ForeignKey(
        ApiKey, on_delete=models.CASCADE, null=True, blank=True, related_name="hooks"
    )

    class Meta:
        indexes = [models.Index(fields=["owner", "enabled"])]

    def __str__(self) -> str:
        return destination(self)  # as the dashboard names it, in the admin's lists

    @property
    def secrets(self) -> dict[str, Any]:
        """The decrypted secrets; decrypted once per instance and ciphertext (a worker reads
        them for every delivery of a batch)."""
        if not self.secrets_encrypted:
            return {}
        cached = self.__dict__.get("_secrets")
        if cached is None or cached[0] != self.secrets_encrypted:
            cached = (self.secrets_encrypted, json.loads(crypto.decrypt(self.secrets_encrypted)))
            self.__dict__["_secrets"] = cached
        return dict(cached[1])

    def set_secrets(self, values: dict[str, Any]) -> None:
        self.secrets_encrypted = crypto.encrypt(json.dumps(values)) if values else ""

    @property
    def event_list(self) -> list[str]:
        return self.events.split()


class DeliveryState(models.TextChoices):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    DELIVERED = "delivered"
    FAILED = "failed"


class Delivery(models.Model):
    """One event to hand to one integration: the outbox row, written with the submission."""

    id = IdField()
    integration = models.ForeignKey(
        Integration, on_delete=models.CASCADE, related_name="deliveries"
    )
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, null=True, blank=True, related_name="deliveries"
    )
    event_type = models.CharField(max_length=40, default=CREATED)
    # The whole event body, for events whose submission may be gone when it is sent
    # (submission.deleted, submission.spam): ids and names only, never field values.
    payload = models.JSONField(null=True, blank=True)
    state = models.CharField(
        max_length=20, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    # While in progress: when the claim lapses, so a dead worker's delivery is taken again.
    lease_until = models.DateTimeField(null=True, blank=True)
    # The fencing token of the claim that holds the row: each claim writes a fresh one, and a
    # worker records its attempt only where the row still carries its own
    # (integrations/delivery/record.py).
    claim = models.UUIDField(null=True, blank=True)
    # When a message for it was last handed to the broker; null when that failed. The
    # sweeper re-queues due rows with no message, or whose message is long overdue.
    queued_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, null=True, blank=True)

    class Meta:
        verbose_name_plural = "deliveries"
        # Partial: only the few rows waiting or in flight are indexed, not every delivery ever
        # made, so claiming stays an index walk of the due rows whatever the table's size.
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                condition=models.Q(state="pending"),
                name="delivery_pending_due",
            ),
            models.Index(
                fields=["lease_until"],
                condition=models.Q(state="in_progress"),
                name="delivery_in_flight_lease",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} → {self.integration_id} ({self.state})"

    @property
    def shown_state(self) -> str:
        """The state the owner sees: an attempt in flight is still pending, since it has not
        ended either way."""
        return DeliveryState.PENDING if self.state == DeliveryState.IN_PROGRESS else self.state

    @property
    def message_id(self) -> str:
        """The Standard Webhooks ``webhook-id``: the same on every retry of this event."""
        return f"msg_{self.pk.hex}"


class DeliveryAttempt(models.Model):
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField()
    succeeded = models.BooleanField()
    status_code = models.PositiveIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, null=True, blank=True)

    class Meta:
        ordering = ["delivery", "number"]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery_id}"


class AutoresponseSent(models.Model):
    """When a form last auto-answered one address (the address is kept only as its SHA-256):
    one autoresponse per recipient per form per hour (integrations/kinds/email/)."""

    form = models.ForeignKey(Form, on_delete=models.CASCADE, db_index=False)
    recipient = models.CharField(max_length=64)
    sent_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["form", "recipient"], name="autoresponse_once"),
        ]
        indexes = [models.Index(fields=["sent_at"], name="autoresponse_sent")]

    def __str__(self) -> str:
        return f"{self.recipient[:12]}… at {self.sent_at}"


class OwnerNotice(models.Model):
    """How one submission's owner notification went out: on its own, or ``held`` for its
    form's hourly digest (past 20 in one hour; integrations/kinds/owner_email/digest.py)."""

    submission = models.OneToOneField(Submission, on_delete=models.CASCADE, primary_key=True)
    form = models.ForeignKey(Form, on_delete=models.CASCADE, db_index=False)
    hour = models.DateTimeField()  # the clock hour the submission arrived in
    held = models.BooleanField()

    class Meta:
        indexes = [models.Index(fields=["form", "hour", "held"], name="owner_notice_hour")]

    def __str__(self) -> str:
        return f"{self.submission_id} ({'digest' if self.held else 'sent'})"


class OwnerDigest(models.Model):
    """One form's hour of owner notifications: its row is locked to count them, and says
    whether the digest of those held went out."""

    form = models.ForeignKey(Form, on_delete=models.CASCADE, db_index=False)
    hour = models.DateTimeField()
    sending_until = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["form", "hour"], name="owner_digest_once"),
        ]
        indexes = [models.Index(fields=["hour"], name="owner_digest_hour")]

    def __str__(self) -> str:
        return f"{self.form_id} at {self.hour}"
