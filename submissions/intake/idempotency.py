"""``Idempotency-Key`` on the public endpoint (contract, "Submission lifecycle").

The first request with a key claims it for the form: one ``INSERT ... ON CONFLICT (form_id,
key) DO NOTHING RETURNING`` that names the id its submission will be stored under and the
fingerprint of its body. A request with the same key and the same body within 24 h answers
that id and stores, counts and delivers nothing; the same key with another body is ``422
idempotency_key_reused``. One that arrives while the first is still running waits for it (up
to WAIT_SECONDS, then 409 with ``Retry-After``), so 20 copies sent at once all get the first
one's answer.

Every age is the database's: ``created_at`` is stamped by it and compared with its own clock
in the same statement that reads the row, so web hosts whose clocks disagree agree on what is
24 h old. The wait checks its deadline on every pass, whatever the pass found.

A claim still pending past ABANDONED_AFTER belongs to a request that died (every request ends
within 30 s, contract "Nothing waits forever"). The next request takes it over under the
*same* submission id, so if the first one was alive after all, the primary key refuses the
second row and both answer the one stored.

Only an answer that stored something (or dropped a honeypot catch as a success) is kept. A
request that failed (rate limited, a bad body, a failed CAPTCHA, the database away) stored
nothing, and gives its key back, so the visitor's retry with the same key is not stuck with
an error that no longer holds.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, connection
from django.db.models import F

from core.errors import ServiceError
from core.ids import new_id
from core.infra import rawsql
from core.infra.dbtime import DatabaseNow
from forms_app.models import Form
from submissions.models import IdempotencyKey, Submission

HEADER = "Idempotency-Key"
KEPT = timedelta(hours=24)
WAIT_SECONDS = 10.0
POLL_SECONDS = 0.05
# Twice the longest a request can live (30 s): a claim this old without its submission
# belongs to a request that has ended; the key is taken over.
ABANDONED_AFTER = timedelta(seconds=60)
PENDING, STORED, DROPPED = "pending", "stored", "dropped"


class FormGone(Exception):
    """The form was deleted: its keys went with it, and no key can be claimed for it."""


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


def key_reused() -> ServiceError:
    return ServiceError(
        "idempotency_key_reused",
        "This Idempotency-Key was already used with a different body; use a new key.",
        422,
    )


def parse(value: str | None) -> str | None:
    """The header's key, None if it was not sent; raises for one that breaks the rules."""
    if value is None:
        return None
    if not 1 <= len(value) <= 255 or not all(" " <= char <= "~" for char in value):
        raise invalid_key()
    return value


def fingerprint(fields: list[list[Any]]) -> str:
    """What makes two bodies the same: their stored fields, names and values, in order."""
    text = json.dumps(fields, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Claim:
    submission_id: uuid.UUID
    replay: bool  # the key was answered before: answer this id, do nothing else
    record_id: int | None = None
    claimed_at: datetime | None = None  # this request's stamp on the row: its fence

    def stored(self) -> None:
        self._mark(STORED)

    def dropped(self) -> None:
        self._mark(DROPPED)

    def give_back(self) -> None:
        """Nothing was stored: a retry with this key runs again. Unless the submission is
        there after all (a claim taken over from a request that stored meanwhile)."""
        if Submission.objects.filter(pk=self.submission_id).exists():
            self.stored()
            return
        self._mine().filter(state=PENDING).delete()

    def _mark(self, state: str) -> None:
        self._mine().update(state=state)

    def _mine(self):
        """The row while this request still holds it (nobody took it over)."""
        if self.record_id is None:
            return IdempotencyKey.objects.none()
        return IdempotencyKey.objects.filter(pk=self.record_id, created_at=self.claimed_at)


def claim(form: Form, key: str, body: str) -> Claim:
    """Claim ``key`` for this request and its body's fingerprint, or the first request's
    answer. Raises 422 for another body, 409 past the wait, FormGone for a deleted form."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        won = _insert(form, key, body)
        if won is not None:
            return won
        answer = _look(form, key, body)
        if answer is not None:
            return answer
        if time.monotonic() > deadline:
            raise key_in_use()
        time.sleep(POLL_SECONDS)


def _look(form: Form, key: str, body: str) -> Claim | None:
    """What the row that beat this request's insert says: an answer, a 422, or None to wait
    (or to insert again when the row has gone meanwhile)."""
    found = _current(form, key)
    if found is None:  # given back meanwhile, or the form is gone
        if not Form.objects.filter(pk=form.pk).exists():
            raise FormGone
        return None
    record, age = found
    if age > KEPT:  # expired: delete it, as the purge would, and claim afresh
        IdempotencyKey.objects.filter(pk=record.pk, created_at=record.created_at).delete()
        return None
    if record.fingerprint and record.fingerprint != body:
        raise key_reused()
    if record.state in (STORED, DROPPED) or _was_stored(record):
        return Claim(record.submission_id, replay=True)
    if age > ABANDONED_AFTER:
        return _take_over(record)
    return None


def _insert(form: Form, key: str, body: str) -> Claim | None:
    """The claim, if no row held the key; None if one did, or if the form is gone."""
    submission_id = new_id()
    key_column = connection.ops.quote_name("key")
    sql = (
        f"INSERT INTO {rawsql.table(IdempotencyKey)} "
        f"(form_id, {key_column}, submission_id, fingerprint, state) "
        f"SELECT %s, %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM {rawsql.table(Form)} "
        f"WHERE id = %s) ON CONFLICT (form_id, {key_column}) DO NOTHING "
        "RETURNING id, created_at"
    )
    form_id = rawsql.db_id(Form, form.pk)
    params = [form_id, key, _db_uuid(submission_id), body, PENDING, form_id]
    try:
        rows = rawsql.fetch(sql, params, _RETURNED)
    except IntegrityError as error:
        # The one constraint ON CONFLICT does not absorb: the form's foreign key, checked
        # when the statement commits (the form was deleted while it ran).
        raise FormGone from error
    if not rows:
        return None
    record_id, claimed_at = rows[0]
    return Claim(submission_id, replay=False, record_id=record_id, claimed_at=claimed_at)


_RETURNED = (IdempotencyKey._meta.get_field("id"), IdempotencyKey._meta.get_field("created_at"))


def _db_uuid(value: uuid.UUID) -> Any:
    return IdempotencyKey._meta.get_field("submission_id").get_db_prep_value(value, connection)


def _current(form: Form, key: str) -> tuple[IdempotencyKey, timedelta] | None:
    """The key's row and its age, both read in one statement on the database's clock."""
    record = (
        IdempotencyKey.objects.filter(form=form, key=key)
        .annotate(database_now=DatabaseNow())
        .first()
    )
    if record is None:
        return None
    return record, record.database_now - record.created_at


def _was_stored(record: IdempotencyKey) -> bool:
    """Stored, but the request ended before it could say so."""
    return Submission.objects.filter(pk=record.submission_id).exists()


def _take_over(record: IdempotencyKey) -> Claim | None:
    """Restamp an abandoned claim as this request's, keeping its submission id: if its first
    request still stores, the primary key refuses one of the two rows."""
    taken = IdempotencyKey.objects.filter(
        pk=record.pk, created_at=record.created_at, state=PENDING
    ).update(created_at=DatabaseNow())
    if not taken:
        return None  # someone else took it, or it was answered: look again
    claimed_at = IdempotencyKey.objects.values_list("created_at", flat=True).get(pk=record.pk)
    return Claim(record.submission_id, replay=False, record_id=record.pk, claimed_at=claimed_at)


def expired_purge(batch: int = 1000) -> int:
    """Delete keys past their 24 h (by the database's clock), a batch at a time."""
    deleted = 0
    while True:
        ids = list(
            IdempotencyKey.objects.alias(cutoff=DatabaseNow())
            .filter(created_at__lt=F("cutoff") - KEPT)
            .values_list("pk", flat=True)[:batch]
        )
        if not ids:
            return deleted
        deleted += IdempotencyKey.objects.filter(pk__in=ids).delete()[0]
