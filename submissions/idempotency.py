"""``Idempotency-Key`` on the public endpoint (contract, "Submission lifecycle").

The first request with a key claims it for the form, in a row whose unique constraint lets
only one claim win, and names there the id its submission will be stored under. A request
with the same key within 24 h answers that id and stores, counts and delivers nothing. One
that arrives while the first is still running waits for it (up to 10 s, then 409 with
``Retry-After``), so 20 copies sent at once all get the first one's answer.

Only an answer that stored something (or dropped a honeypot catch as a success) is kept. A
request that failed (rate limited, a bad body, a failed CAPTCHA, the database away) stored
nothing, and gives its key back, so the visitor's retry with the same key is not stuck with
an error that no longer holds.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction

from config import clock
from config.errors import ServiceError
from config.ids import new_id
from forms_app.models import Form
from submissions.models import IdempotencyKey, Submission

HEADER = "Idempotency-Key"
KEPT = timedelta(hours=24)
WAIT_SECONDS = 10.0
POLL_SECONDS = 0.05
# A claim this old without its submission belongs to a request that died (no request lives
# this long: the server's timeouts end it first); the key is free again.
ABANDONED_AFTER = timedelta(minutes=5)
PENDING, STORED, DROPPED = "pending", "stored", "dropped"


def invalid_key() -> ServiceError:
    return ServiceError(
        "invalid_idempotency_key",
        "Idempotency-Key must be 1 to 255 printable ASCII characters.",
        400,
    )


def key_in_use() -> ServiceError:
    return ServiceError(
        "idempotency_key_in_use",
        "A request with this Idempotency-Key is still being processed. Try again shortly.",
        409,
        headers={"Retry-After": "1"},
    )


def parse(value: str | None) -> str | None:
    """The header's key, None if it was not sent; raises for one that breaks the rules."""
    if value is None:
        return None
    if not 1 <= len(value) <= 255 or not all(" " <= char <= "~" for char in value):
        raise invalid_key()
    return value


@dataclass
class Claim:
    submission_id: uuid.UUID
    replay: bool  # the key was answered before: answer this id, do nothing else
    record_id: int | None = None

    def stored(self) -> None:
        self._mark(STORED)

    def dropped(self) -> None:
        self._mark(DROPPED)

    def give_back(self) -> None:
        """Nothing was stored: a retry with this key runs again."""
        if self.record_id is not None:
            IdempotencyKey.objects.filter(pk=self.record_id, state=PENDING).delete()

    def _mark(self, state: str) -> None:
        if self.record_id is not None:
            IdempotencyKey.objects.filter(pk=self.record_id).update(state=state)


def claim(form: Form, key: str) -> Claim:
    """Claim ``key`` for this request, or the first request's answer."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        won = _try_claim(form, key)
        if won is not None:
            return won
        record = IdempotencyKey.objects.filter(form=form, key=key).first()
        if record is None:
            continue  # given back or expired meanwhile: claim it again
        if _answered(record):
            return Claim(record.submission_id, replay=True)
        if _stale(record):
            IdempotencyKey.objects.filter(pk=record.pk, created_at=record.created_at).delete()
            continue
        if time.monotonic() > deadline:
            raise key_in_use()
        time.sleep(POLL_SECONDS)


def _try_claim(form: Form, key: str) -> Claim | None:
    submission_id = new_id()
    try:
        with transaction.atomic():
            record = IdempotencyKey.objects.create(form=form, key=key, submission_id=submission_id)
    except IntegrityError:
        return None
    return Claim(submission_id, replay=False, record_id=record.pk)


def _answered(record: IdempotencyKey) -> bool:
    if record.created_at < clock.now() - KEPT:
        return False
    if record.state in (STORED, DROPPED):
        return True
    # Stored, but the request ended before it could say so.
    return Submission.objects.filter(pk=record.submission_id).exists()


def _stale(record: IdempotencyKey) -> bool:
    age = clock.now() - record.created_at
    return age > KEPT or (record.state == PENDING and age > ABANDONED_AFTER)


def expired_purge(batch: int = 1000) -> int:
    """Delete keys past their 24 h, a batch at a time."""
    cutoff = clock.now() - KEPT
    deleted = 0
    while True:
        ids = list(
            IdempotencyKey.objects.filter(created_at__lt=cutoff).values_list("pk", flat=True)[
                :batch
            ]
        )
        if not ids:
            return deleted
        deleted += IdempotencyKey.objects.filter(pk__in=ids).delete()[0]
