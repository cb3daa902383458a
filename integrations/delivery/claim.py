"""Claiming due deliveries under a fencing token and a lease, and loading what an attempt reads.

A batch's lease is short and renewed between attempts while the worker lives, so the
deliveries of a worker that died are taken again within 25 s (the lease, then the next
5-second sweep). It is renewed when less than RENEW_BEFORE is left: more than one attempt
may take (10 s). Lease times come from the database's clock (core/infra/dbclock.py).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.db import connection

from core.infra import dbclock, rawsql
from files.selectors import keeps_files_sql
from forms_app.models import Form
from integrations.delivery import backends
from integrations.models import Delivery, DeliveryState, Integration
from submissions.models import Submission

LEASE = timedelta(seconds=20)
RENEW_BEFORE = timedelta(seconds=12)

# The lanes a claim takes from. A destination whose attempts keep taking most of their
# deadline (Integration.slow_until, set by record.py) is in the slow lane, which each worker
# process works through one delivery at a time beside its other work (worker.py); every
# other destination is in the normal lane. ANY is for a delivery named by id whatever its
# lane: an owner's test send.
NORMAL, SLOW, ANY = "normal", "slow", "any"


def token_value(value: uuid.UUID | None) -> Any:
    """A fencing token as the database takes it (a UUID is text on SQLite)."""
    return Delivery._meta.get_field("claim").get_db_prep_value(value, connection)


class Claim(list):
    """The ids of a claimed batch, and the claim's fencing token."""

    def __init__(self, ids: list, token: uuid.UUID) -> None:
        super().__init__(ids)
        self.token = token


def deliveries_claim_batch(size: int, *, ids: Iterable | None = None,
                           lane: str = NORMAL) -> Claim:
    """Claim up to ``size`` deliveries of ``lane`` in one statement: those whose worker
    vanished (lease lapsed) first, then the due ones, oldest first; only those of ``ids`` if
    given (a single delivery is a batch of one). The rows get a fresh fencing token.

    Each kind is an ordered walk of its own partial index that stops after ``size`` rows; one
    condition with OR made PostgreSQL sort every due row for each claim, so a backlog cost
    more the longer it was. On PostgreSQL, SKIP LOCKED lets workers claim side by side
    without waiting for each other (integrations/delivery/backends.py).
    """
    clock_now = dbclock.now()
    now = connection.ops.adapt_datetimefield_value(clock_now)
    token = uuid.uuid4()
    table = Delivery._meta.db_table
    skip_locked = backends.sql().skip_locked
    only, only_params = _only(ids)
    in_lane, lane_params = _in_lane(lane, now)
    only, only_params = only + in_lane, only_params + lane_params
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH lapsed AS (SELECT id FROM {table} d WHERE state = %s AND lease_until < %s"
            f"{only} ORDER BY lease_until LIMIT %s{skip_locked}), "
            f"due AS (SELECT id FROM {table} d WHERE state = %s AND next_attempt_at <= %s"
            f"{only} ORDER BY next_attempt_at LIMIT %s{skip_locked}) "
            f"UPDATE {table} SET state = %s, lease_until = %s, claim = %s, "
            "attempts = attempts + 1 "
            "WHERE id IN (SELECT id FROM (SELECT id FROM lapsed UNION ALL SELECT id FROM due) "
            "AS claimable LIMIT %s) RETURNING id",
            [
                DeliveryState.IN_PROGRESS,
                now,
                *only_params,
                size,
                DeliveryState.PENDING,
                now,
                *only_params,
                size,
                DeliveryState.IN_PROGRESS,
                connection.ops.adapt_datetimefield_value(clock_now + LEASE),
                token_value(token),
                size,
            ],
        )
        return Claim([row[0] for row in cursor.fetchall()], token)


def _only(ids: Iterable | None) -> tuple[str, list]:
    if ids is None:
        return "", []
    values = [rawsql.db_id(Delivery, pk) for pk in ids]
    return f" AND id IN ({rawsql.placeholders(len(values))})", values


def _in_lane(lane: str, now: Any) -> tuple[str, list]:
    """The condition on a claimed row's destination (``d`` is the delivery) for ``lane``."""
    if lane == ANY:
        return "", []
    slow = (f"EXISTS (SELECT 1 FROM {rawsql.table(Integration)} i "
            "WHERE i.id = d.integration_id AND i.slow_until > %s)")
    return (f" AND {slow}" if lane == SLOW else f" AND NOT {slow}"), [now]


def deliveries_give_back(claim: Claim, ids: list) -> int:
    """Rows of the claim it will not attempt, handed back as they were before it: due, their
    attempt not counted, and no message on its way, so the sweeper sends one within seconds
    (or a worker still running finds them first)."""
    if not ids:
        return 0
    return rawsql.execute(
        f"UPDATE {rawsql.table(Delivery)} SET state = %s, claim = NULL, lease_until = NULL, "
        "queued_at = NULL, attempts = attempts - 1 WHERE state = %s AND claim = %s "
        f"AND id IN ({rawsql.placeholders(len(ids))})",
        [DeliveryState.PENDING, DeliveryState.IN_PROGRESS, token_value(claim.token),
         *(rawsql.db_id(Delivery, pk) for pk in ids)],
    )


class Lease:
    """The claim on a batch, renewed between attempts while any of it is in flight; only
    rows that still carry this claim's token are renewed, and only they are attempted: a row
    whose lease lapsed (an attempt that ran long) may be another worker's now."""

    def __init__(self, claim: Claim) -> None:
        self.claim = claim
        self.renew_at = dbclock.now() + LEASE - RENEW_BEFORE
        self.held = {_ident(pk) for pk in claim}

    def keep(self) -> None:
        """Renew the lease if it runs short."""
        if dbclock.now() < self.renew_at:
            return
        self._renew()
        if dbclock.now() >= self.renew_at:
            # The renewal waited on the database (SQLite's write lock, a busy server) past
            # the lease's slack: the end it wrote was reckoned from before the wait, perhaps
            # already past. Once more, now that the database answers.
            self._renew()

    def _renew(self) -> None:
        """One statement that renews and tells which rows the claim still holds. On
        PostgreSQL it skips a row another session has locked (a delete of its submission)
        rather than wait for it: the batch's threads wait behind a renewal, and a row not
        renewed is not attempted (its lease hands it on)."""
        now = dbclock.now()
        table = rawsql.table(Delivery)
        rows = (f"SELECT id FROM {table} WHERE state = %s AND claim = %s "
                f"AND id IN ({rawsql.placeholders(len(self.claim))})"
                f"{backends.sql().skip_locked}")
        params = [DeliveryState.IN_PROGRESS, token_value(self.claim.token),
                  *(rawsql.db_id(Delivery, pk) for pk in self.claim)]
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {table} SET lease_until = %s WHERE id IN ({rows}) "
                           "RETURNING id",
                           [connection.ops.adapt_datetimefield_value(now + LEASE), *params])
            self.held = {_ident(row[0]) for row in cursor.fetchall()}
        self.renew_at = now + LEASE - RENEW_BEFORE

    def holds(self, delivery: Delivery) -> bool:
        return _ident(delivery.pk) in self.held


def _ident(value: Any) -> str:
    """A delivery id as one text, whatever form the database or the ORM gave it in."""
    return str(Delivery._meta.pk.to_python(value))


@functools.cache
def _claimed_columns() -> tuple:
    delivery, submission, form = Delivery._meta, Submission._meta, Form._meta
    return (
        delivery.get_field("id"),
        delivery.get_field("integration"),
        delivery.get_field("submission"),
        delivery.get_field("event_type"),
        delivery.get_field("attempts"),
        submission.get_field("submitted_at"),
        submission.get_field("data"),
        submission.get_field("form"),
        form.get_field("slug"),
        form.get_field("name"),
        form.get_field("file_uploads"),  # then keeps_files, a boolean no field converts
    )


def _integrations(ids: set) -> dict:
    if not ids:  # every claimed row was deleted since (its submission, or its form)
        return {}
    fields = Integration._meta.concrete_fields
    rows = rawsql.fetch(
        f"SELECT {', '.join(str(field.column) for field in fields)} "
        f"FROM {rawsql.table(Integration)} "
        f"WHERE id IN ({rawsql.placeholders(len(ids))})",
        [rawsql.db_id(Integration, pk) for pk in ids],
        tuple(fields),
    )
    names = [field.attname for field in fields]
    loaded = (Integration.from_db(connection.alias, names, row) for row in rows)
    return {integration.pk: integration for integration in loaded}


def claimed_deliveries(claim: Claim) -> list[Delivery]:
    """Claimed deliveries with what an attempt reads, from two queries for the whole batch.

    The ORM's select_related built five model instances a row and compiled its query on every
    batch, which cost the worker more than the attempts. Here one hand-written join brings
    the columns, one Integration instance serves every delivery of the batch (its secrets
    decrypted once), and so does one Form.
    """
    rows = rawsql.fetch(
        "SELECT d.id, d.integration_id, d.submission_id, d.event_type, d.attempts, "
        "s.submitted_at, s.data, s.form_id, f.slug, f.name, f.file_uploads, "
        f"{keeps_files_sql('f.id')} "
        f"FROM {rawsql.table(Delivery)} d "
        f"LEFT JOIN {rawsql.table(Submission)} s ON s.id = d.submission_id "
        f"LEFT JOIN {rawsql.table(Form)} f ON f.id = s.form_id "
        f"WHERE d.id IN ({rawsql.placeholders(len(claim))})",
        [rawsql.db_id(Delivery, pk) for pk in claim],
        _claimed_columns(),
    )
    integrations = _integrations({row[1] for row in rows})
    forms: dict = {}
    deliveries = []
    for pk, integration_id, submission_id, event_type, attempts, *submitted in rows:
        submission = None
        if submission_id is not None:
            submitted_at, data, form_id, slug, name, file_uploads, keeps_files = submitted
            if form_id not in forms:
                forms[form_id] = Form(pk=form_id, slug=slug, name=name, file_uploads=file_uploads)
                forms[form_id].keeps_files = bool(keeps_files)  # files.selectors.shown
            submission = Submission(
                pk=submission_id, form=forms[form_id], submitted_at=submitted_at, data=data
            )
        delivery = Delivery(
            pk=pk,
            integration=integrations[integration_id],
            submission=submission,
            event_type=event_type,
            state=DeliveryState.IN_PROGRESS,
            attempts=attempts,
            claim=claim.token,
        )
        delivery._state.adding = False  # loaded, not new: save(update_fields=...) updates
        delivery._state.db = connection.alias
        deliveries.append(delivery)
    return deliveries
