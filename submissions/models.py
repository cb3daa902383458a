from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from core.ids import IdField
from core.infra.dbtime import DatabaseNow
from forms_app.models import Form


class Status(models.TextChoices):
    INBOX = "inbox"
    SPAM = "spam"


class InboxManager(models.Manager):
    """What the owner receives: the pull API, exports, counts and deliveries read only these.
    A held submission (the spam folder) is never among them."""

    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().filter(status=Status.INBOX)


class SpamWord(models.Model):
    """What an owner's marks taught the filter: how often a word was in submissions marked
    spam, and in submissions marked not spam (submissions/learning.py)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              db_index=False)
    word = models.CharField(max_length=40)
    spam = models.PositiveIntegerField(default=0)
    ham = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner", "word"], name="spamword_owner_word"),
        ]

    def __str__(self) -> str:
        return f"{self.word}: {self.spam} spam, {self.ham} not spam"


class Submission(models.Model):
    id = IdField()
    # The composite index below leads with form, so the FK needs no index of its own.
    form = models.ForeignKey(
        Form, on_delete=models.CASCADE, related_name="submissions", db_index=False
    )
    # Stamped by the database in the INSERT, and raised by the feed's sequencer to the newest
    # stamp already in the feed when the row committed after a newer one (submissions/feed/),
    # so stamps never go down along the feed: a client syncing with `since` misses nothing.
    submitted_at = models.DateTimeField(db_default=DatabaseNow())
    # The row's place in the feed, given after it committed (submissions/feed/); null until
    # then, and again after a rescue, which enters the feed anew.
    position = models.BigIntegerField(null=True, blank=True)
    # [[name, value], ...] in submitted order: a JSON object would lose the order in jsonb.
    data = models.JSONField()
    ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=512, blank=True, default="")
    origin = models.CharField(max_length=300, blank=True, default="")
    # inbox, or spam: held by the filter or marked by the owner (contract, "Spam protection").
    # A column default, so the one-statement store needs no change.
    status = models.CharField(
        max_length=5, choices=Status.choices, default=Status.INBOX, db_default=Status.INBOX
    )
    # The first arrival, kept when a rescue from the spam folder restamps submitted_at; null
    # while the two are the same.
    received_at = models.DateTimeField(null=True, blank=True)
    # The filter's verdict, {"score", "reasons", "details"}; null when the filter did not run.
    spam = models.JSONField(null=True, blank=True)
    # The page's _subject (contract, "Drop-in"): the subject of the owner's notification,
    # already fit for a mail header; null when the page sent none. Never part of ``data``.
    # Nullable with no default: SQLite adds such a column in place, where a default would
    # rebuild the table and lose its triggers (0008_sqlite_stamp_order).
    subject = models.CharField(max_length=200, null=True, blank=True)
    # When the owner first opened it in the dashboard (or marked it read); null while unread.
    # Nullable with no default, so the one-statement store needs no change.
    read_at = models.DateTimeField(null=True, blank=True)

    objects = models.Manager()
    inbox = InboxManager()

    class Meta:
        indexes = [
            # Keyset reads of the inbox (pull API, exports, the owner's list) and its counts.
            models.Index(
                fields=["form", "submitted_at", "id"],
                name="submission_inbox_time_id",
                condition=models.Q(status="inbox"),
            ),
            # The feed: what the pull API and the stream page through, (submitted_at, position).
            models.Index(
                fields=["form", "submitted_at", "position"],
                name="submission_feed",
                condition=models.Q(status="inbox", position__isnull=False),
            ),
            # What the feed's sequencer has still to place: empty, or nearly, at all times.
            models.Index(
                fields=["submitted_at", "id"],
                name="submission_unplaced",
                condition=models.Q(position__isnull=True),
            ),
            # The spam folder, and its purge after 30 days.
            models.Index(
                fields=["form", "submitted_at", "id"],
                name="submission_spam_time_id",
                condition=models.Q(status="spam"),
            ),
        ]

    def __str__(self) -> str:
        return f"submission {self.pk}"

    @property
    def fields(self) -> dict[str, Any]:
        return dict(self.data)

    @property
    def first_received_at(self):
        return self.received_at or self.submitted_at


class FeedState(models.Model):
    """The feed's one row: the last position given and the newest stamp in the feed. Written
    only by the sequencer, under its lock (submissions/feed/)."""

    last_position = models.BigIntegerField(default=0)
    newest = models.DateTimeField()

    def __str__(self) -> str:
        return f"feed at {self.last_position}, {self.newest}"


class FolderCount(models.Model):
    """A folder's size up to a checkpoint: its rows placed in the feed at or before
    ``counted_upto`` (none while that is null), all stamped at or before ``counted_before``.
    The rows after it are counted when read (submissions/folders.py)."""

    form = models.ForeignKey(Form, on_delete=models.CASCADE, db_index=False)
    status = models.CharField(max_length=5, choices=Status.choices)
    counted_upto = models.BigIntegerField(null=True)
    counted_before = models.DateTimeField(null=True)
    count = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["form", "status"], name="foldercount_form_status"),
        ]

    def __str__(self) -> str:
        return f"{self.status}: {self.count} up to {self.counted_upto}"


class IdempotencyKey(models.Model):
    """A client's ``Idempotency-Key`` for one form, held for 24 h
    (submissions/intake/idempotency.py).

    The first request with the key claims it and names the submission it will store; the
    others answer what it answered. ``submission_id`` is not a foreign key: the answer stays
    the same if the submission is deleted, and a honeypot catch names one never stored.
    """

    form = models.ForeignKey(Form, on_delete=models.CASCADE, db_index=False)
    key = models.CharField(max_length=255)
    submission_id = models.UUIDField()
    # The SHA-256 of the first request's stored fields: the same key with another body is
    # refused (422). Empty for keys claimed before fingerprints were kept.
    fingerprint = models.CharField(max_length=64, blank=True, default="", db_default="")
    # pending while the first request runs; stored once its submission is; dropped for a
    # honeypot catch, which stores nothing and is still answered as a success.
    state = models.CharField(max_length=7, default="pending")
    created_at = models.DateTimeField(db_default=DatabaseNow())

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["form", "key"], name="idempotency_form_key"),
        ]
        indexes = [models.Index(fields=["created_at"], name="idempotency_created")]

    def __str__(self) -> str:
        return f"{self.key} → {self.submission_id}"


class Erasure(models.Model):
    """The receipt of an erasure by address (contract, "Event subscriptions and erasure"): the
    address itself is not kept, only its SHA-256 and its last 4 characters."""

    id = IdField()
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="erasures")
    email_hash = models.CharField(max_length=64)
    email_hint = models.CharField(max_length=8)
    submissions = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "-created_at"], name="erasure_owner_created")]

    def __str__(self) -> str:
        return f"erasure of {self.email_hint}: {self.submissions} submissions"
