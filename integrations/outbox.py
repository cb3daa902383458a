"""The outbox: delivering events to integrations.

A submission writes one Delivery row per matching integration in its own transaction; the
Celery message sent after commit is only a nudge (integrations/nudge.py). Workers claim rows
in batches with a conditional UPDATE, record every attempt, and keep the retry schedule in the
row. The sweeper re-queues what is due or abandoned, so a lost message or a dead worker only
delays a delivery. The integrations themselves are made and changed in services.py.

Exactly once while workers live: each claim writes a fresh fencing token (``claim``) into its
rows, and every later write of the claim (renewing the lease, recording an attempt) is made
``WHERE id = ... AND claim = ...``, so a worker whose lease lapsed can record nothing over the
worker that took the rows next. A lease lapses only if its worker dies or stalls: every
attempt ends within its 10 s deadline (integrations/clients/http.py cuts it), well inside the
20 s lease renewed before each attempt. Lease and retry times come from the database's clock
(core/infra/dbclock.py), so machines whose clocks differ agree on when a lease has lapsed.
"""

from __future__ import annotations

import functools
import logging
import random
import time
import uuid
from datetime import datetime, timedelta
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q

from accounts.models import User
from core.errors import ServiceError, default_error
from core.infra import broker, dbclock, rawsql
from files.selectors import keeps_files_sql
from forms_app.models import Form
from integrations import alerts, events, nudge, transports
from integrations.models import (
    CREATED,
    TEST,
    Delivery,
    DeliveryAttempt,
    DeliveryState,
    Health,
    Integration,
)
from submissions.models import Submission

logger = logging.getLogger(__name__)

LEASE = timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + 30)
COUNTDOWN_LIMIT_SECONDS = 60  # longer waits are left to the sweeper, not to broker ETAs
REQUEUE_AFTER = timedelta(minutes=5)



def deliveries_insert(
    submission_id, owner_id, form_id, *, missing_only: bool = False, only_if: str = ""
) -> tuple[str, list]:
    """SQL and parameters that insert one pending delivery per matching integration of a
    submission, answering their ids: one statement for any number of integrations.

    ``missing_only`` skips integrations that already have a delivery of this submission (a
    rescue of one that was in the inbox before: what was made, or failed, stays as it is).
    ``only_if``: a condition (SQL without parameters) that must hold too, as a statement's
    own submission insert having inserted a row."""
    now = connection.ops.adapt_datetimefield_value(dbclock.now())
    uuid_sql = "gen_random_uuid()" if connection.vendor == "postgresql" else (
        "lower(hex(randomblob(16)))"
    )
    sql = (
        f"INSERT INTO {Delivery._meta.db_table} (id, integration_id, submission_id, "
        "event_type, state, attempts, next_attempt_at, queued_at, created_at) "
        f"SELECT {uuid_sql}, i.id, %s, %s, %s, 0, %s, %s, %s "
        f"FROM {Integration._meta.db_table} i WHERE i.owner_id = %s AND i.enabled = %s "
        "AND (i.form_id IS NULL OR i.form_id = %s) AND i.events LIKE %s"
    )
    if missing_only:
        sql += (
            f" AND NOT EXISTS (SELECT 1 FROM {Delivery._meta.db_table} d "
            "WHERE d.integration_id = i.id AND d.submission_id = %s)"
        )
    if only_if:
        sql += f" AND {only_if}"
    sql += " RETURNING id"
    params = [
        rawsql.db_id(Submission, submission_id),
        CREATED,
        DeliveryState.PENDING,
        now,
        now,
        now,
        rawsql.db_id(User, owner_id),
        True,
        rawsql.db_id(Form, form_id),
        f"%{CREATED}%",  # those that receive it (Integration.events)
    ]
    if missing_only:
        params.append(rawsql.db_id(Submission, submission_id))
    return sql, params


def deliveries_record(*, submission: Submission, missing_only: bool = False) -> list:
    """Inside the submission's transaction: one pending delivery per matching integration.

    Workers are nudged after commit."""
    form = submission.form
    sql, params = deliveries_insert(
        submission.pk, form.owner_id, form.pk, missing_only=missing_only
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        ids = [row[0] for row in cursor.fetchall()]
    if ids:
        transaction.on_commit(lambda: deliveries_queue(ids), robust=True)
    return ids


def deliveries_drop_pending(*, submission_id) -> int:
    """A submission marked spam is not delivered any more: its deliveries still waiting are
    dropped. One a worker has already taken goes ahead (it may be on the wire), and one made or
    failed stays in the ledger."""
    return Delivery.objects.filter(
        submission_id=submission_id, state=DeliveryState.PENDING
    ).delete()[0]


def _wake_workers(what: str, *, always_try: bool = False) -> bool:
    """One deliver_due message; False if the broker is away (the sweeper then sends)."""
    from integrations.tasks import deliver_due

    return broker.publish(lambda: deliver_due.apply_async(retry=False), what,
                          always_try=always_try)


def deliveries_queue(ids: list, *, force: bool = False, sweeping: bool = False) -> None:
    """Nudge workers about due deliveries ``ids``; one message covers any number of them.

    Only the caller that raises the flag publishes (see integrations/nudge.py); ``force``
    publishes anyway (a retry, or the sweeper, which cannot know whether the last message
    was lost). The sweeper tries the broker even during its pause after a failure: it runs in
    the background, and must find the broker back at once. If the broker is away, the rows
    are marked unsent and the sweeper sends them.
    """
    if not (nudge.raise_flag() or force):
        return
    if not _wake_workers(f"{len(ids)} deliveries", always_try=sweeping):
        nudge.take_flag()  # no message is on its way: the next commit must try again
        nudge.forget()
        Delivery.objects.filter(pk__in=ids).update(queued_at=None)


def delivery_retry_later(delivery_id, countdown: float) -> None:
    """A short wait before the next attempt: a message with a countdown, not the sweeper."""
    from integrations.tasks import deliver

    def send() -> None:
        deliver.apply_async((str(delivery_id),), countdown=countdown, retry=False)

    if not broker.publish(send, f"delivery {delivery_id}"):
        Delivery.objects.filter(pk=delivery_id).update(queued_at=None)


# Up to 25 a claim: under load a worker finds a backlog after each batch, and every batch costs
# the same six statements however full it is (from 10: 0.65 to 0.61 ms of worker CPU a
# delivery). Larger, and one slow receiver would hold more deliveries behind it.
BATCH_SIZE = 25
# A batch's lease is short and renewed between attempts while the worker lives, so the
# deliveries of a worker that died are taken again within 25 s (the lease, then the next
# 5-second sweep). It is renewed when less than RENEW_BEFORE is left: more than one attempt
# may take (10 s).
BATCH_LEASE = timedelta(seconds=20)
RENEW_BEFORE = timedelta(seconds=12)
RUN_DUE_BUDGET_SECONDS = 20.0  # then the task hands over, well inside its time limit


LINGER_POLL_SECONDS = 0.02


def deliveries_run_due() -> int:
    """A worker's loop: claim due deliveries in batches and attempt them until none is left,
    then linger a moment for more (integrations/nudge.py), holding the flag up.

    When a whole batch was due, another message asks a second worker to help. After the
    budget the task hands over to a fresh message, so no task nears its time limit.
    """
    began, done, helped = time.monotonic(), 0, False
    idle_since: float | None = None
    renewed = 0.0
    while True:
        now = time.monotonic()
        if now - renewed > nudge.RENEW_EVERY_SECONDS:
            nudge.hold_flag()
            renewed = now
        ids = deliveries_claim_batch(BATCH_SIZE)
        if not ids:
            idle_since = idle_since or now
            if now - idle_since < settings.DELIVERY_LINGER_SECONDS:
                _wait_for_due(idle_since + settings.DELIVERY_LINGER_SECONDS)
                continue
            if _handed_back():
                return done
            renewed, idle_since = 0.0, None  # work came in the grace: on with it
            continue
        idle_since = None
        if len(ids) == BATCH_SIZE and not helped:
            # One helper a run: it loops like this one until nothing is due.
            helped = _wake_workers("a helper for a full batch")
        deliveries_attempt(ids)
        done += len(ids)
        if len(ids) < BATCH_SIZE:
            _pace(since=now)
        if time.monotonic() - began > RUN_DUE_BUDGET_SECONDS:
            # Hand over; if the broker is away the rows stay due and the sweeper sends them.
            _wake_workers("the rest of the due work")
            return done


def _pace(since: float) -> None:
    """After a batch that was not full, claim again no sooner than the pace after the last
    claim. An eager worker took one or two rows a claim under a steady load, paying a batch's
    statements for each; waiting lets rows gather (at most that long a delay)."""
    wait = since + settings.DELIVERY_BATCH_PACE_SECONDS - time.monotonic()
    if wait > 0:
        time.sleep(wait)


def _wait_for_due(until: float) -> None:
    """Look for due rows every few milliseconds with a read, not a claim: on SQLite a claim
    is a write, and would queue with the web's."""
    while time.monotonic() < until:
        time.sleep(LINGER_POLL_SECONDS)
        if _any_due():
            return


def _handed_back() -> bool:
    """Take the flag down and look once more after the grace: True if nothing came, and
    waking a worker is the next commit's job again."""
    nudge.take_flag()
    grace = nudge.grace()
    if grace:
        time.sleep(grace)
    return not _any_due()


def _any_due() -> bool:
    """Two reads, each a walk of one partial index that stops at its first row."""
    now = dbclock.now()
    return (
        Delivery.objects.filter(state=DeliveryState.PENDING, next_attempt_at__lte=now).exists()
        or Delivery.objects.filter(state=DeliveryState.IN_PROGRESS, lease_until__lt=now).exists()
    )


def _token(value: uuid.UUID | None) -> Any:
    """A fencing token as the database takes it (a UUID is text on SQLite)."""
    return Delivery._meta.get_field("claim").get_db_prep_value(value, connection)


class Claim(list):
    """The ids of a claimed batch, and the claim's fencing token."""

    def __init__(self, ids: list, token: uuid.UUID) -> None:
        super().__init__(ids)
        self.token = token


def deliveries_claim_batch(size: int) -> Claim:
    """Claim up to ``size`` deliveries in one statement: those whose worker vanished (lease
    lapsed) first, then the due ones, oldest first. The rows get a fresh fencing token.

    Each kind is an ordered walk of its own partial index that stops after ``size`` rows; one
    condition with OR made PostgreSQL sort every due row for each claim, so a backlog cost
    more the longer it was. On PostgreSQL, SKIP LOCKED lets workers claim side by side
    without waiting for each other; SQLite has one writer, so the plain subqueries do.
    """
    clock_now = dbclock.now()
    now = connection.ops.adapt_datetimefield_value(clock_now)
    token = uuid.uuid4()
    table = Delivery._meta.db_table
    skip_locked = " FOR UPDATE SKIP LOCKED" if connection.vendor == "postgresql" else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH lapsed AS (SELECT id FROM {table} WHERE state = %s AND lease_until < %s "
            f"ORDER BY lease_until LIMIT %s{skip_locked}), "
            f"due AS (SELECT id FROM {table} WHERE state = %s AND next_attempt_at <= %s "
            f"ORDER BY next_attempt_at LIMIT %s{skip_locked}) "
            f"UPDATE {table} SET state = %s, lease_until = %s, claim = %s, "
            "attempts = attempts + 1 "
            "WHERE id IN (SELECT id FROM (SELECT id FROM lapsed UNION ALL SELECT id FROM due) "
            "AS claimable LIMIT %s) RETURNING id",
            [
                DeliveryState.IN_PROGRESS,
                now,
                size,
                DeliveryState.PENDING,
                now,
                size,
                DeliveryState.IN_PROGRESS,
                connection.ops.adapt_datetimefield_value(clock_now + BATCH_LEASE),
                _token(token),
                size,
            ],
        )
        return Claim([row[0] for row in cursor.fetchall()], token)


class _Lease:
    """The claim on a batch, renewed between attempts while any of it is in flight; only
    rows that still carry this claim's token are renewed, and only they are attempted: a row
    whose lease lapsed (an attempt that ran long) may be another worker's now."""

    def __init__(self, claim: Claim) -> None:
        self.claim = claim
        self.renew_at = dbclock.now() + BATCH_LEASE - RENEW_BEFORE
        self.held = {_ident(pk) for pk in claim}

    def keep(self) -> None:
        now = dbclock.now()
        if now < self.renew_at:
            return
        adapt = connection.ops.adapt_datetimefield_value
        where = (f"WHERE state = %s AND claim = %s "
                 f"AND id IN ({rawsql.placeholders(len(self.claim))})")
        params = [DeliveryState.IN_PROGRESS, _token(self.claim.token),
                  *(rawsql.db_id(Delivery, pk) for pk in self.claim)]
        rawsql.execute(f"UPDATE {rawsql.table(Delivery)} SET lease_until = %s {where}",
                       [adapt(now + BATCH_LEASE), *params])
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id FROM {rawsql.table(Delivery)} {where}", params)
            self.held = {_ident(row[0]) for row in cursor.fetchall()}
        self.renew_at = now + BATCH_LEASE - RENEW_BEFORE

    def holds(self, delivery: Delivery) -> bool:
        return _ident(delivery.pk) in self.held


def _ident(value: Any) -> str:
    """A delivery id as one text, whatever form the database or the ORM gave it in."""
    return str(Delivery._meta.pk.to_python(value))


def deliveries_attempt(claim: Claim) -> None:
    """One attempt at each claimed delivery; successes are recorded together."""
    succeeded = []
    lease = _Lease(claim)
    for delivery in claimed_deliveries(claim):
        lease.keep()
        if not lease.holds(delivery):
            continue  # re-queued by the sweeper after its lease lapsed: not ours to send
        if _disabled(delivery):
            _finish(delivery, DeliveryState.FAILED, "Integration is disabled")
            continue
        outcome, started, duration_ms = _attempt(delivery)
        if outcome.ok and outcome.secrets is None:
            succeeded.append((delivery, outcome, started, duration_ms))
        else:
            _after_attempt(_record(delivery, outcome, started, duration_ms))
    if succeeded:
        _record_successes(succeeded)


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


def _attempt(delivery: Delivery) -> tuple[transports.Outcome, datetime, int]:
    started, began = dbclock.now(), time.monotonic()
    try:
        outcome = transports.deliver(
            delivery.integration, events.event_for(delivery), delivery.message_id
        )
    except SoftTimeLimitExceeded:
        raise  # the task must end now: the lease hands the batch on, nothing is recorded
    except Exception as error:
        # An unexpected failure is recorded like any other, instead of waiting for the lease.
        logger.exception("Delivery %s failed unexpectedly", delivery.pk)
        outcome = transports.Outcome(False, error=f"Internal error: {type(error).__name__}")
    return outcome, started, int((time.monotonic() - began) * 1000)


def _record_successes(results: list) -> None:
    """Record delivered attempts in two hand-written statements, whatever their number.

    Each integration's health is updated in a statement of its own, after the deliveries are
    recorded and in a fixed order: two workers recording batches that share integrations
    must never hold one integration's row while waiting for another's.
    """
    adapt = connection.ops.adapt_datetimefield_value
    token = results[0][0].claim  # one claim's batch
    with transaction.atomic():
        # Fenced: only rows this claim still holds are recorded (and get an attempt row).
        held = {uuid.UUID(str(pk)) for (pk,) in rawsql.fetch(
            f"UPDATE {rawsql.table(Delivery)} SET state = %s, last_error = NULL, finished_at = %s, "
            f"lease_until = NULL WHERE claim = %s "
            f"AND id IN ({rawsql.placeholders(len(results))}) RETURNING id",
            [DeliveryState.DELIVERED, adapt(dbclock.now()), _token(token),
             *(rawsql.db_id(Delivery, row[0].pk) for row in results)],
            (Delivery._meta.pk,),
        )}
        results = [row for row in results if uuid.UUID(str(row[0].pk)) in held]
        attempts = [
            [rawsql.db_id(Delivery, delivery.pk), delivery.attempts, adapt(started),
             duration_ms, True, outcome.status_code]
            for delivery, outcome, started, duration_ms in results
        ]
        if attempts:
            rawsql.execute(
                f"INSERT INTO {rawsql.table(DeliveryAttempt)} (delivery_id, number, "
                "started_at, duration_ms, succeeded, status_code) VALUES "
                + ", ".join(["(%s, %s, %s, %s, %s, %s)"] * len(attempts)),
                [value for row in attempts for value in row],
            )
    latest: dict = {}
    for delivery, outcome, started, _ in results:
        integration = delivery.integration
        if integration.pk not in latest or latest[integration.pk][2] < started:
            latest[integration.pk] = (integration, outcome, started)
    for key in sorted(latest):
        _update_integration(*latest[key])


def delivery_claim(delivery_id) -> bool:
    """Take a due delivery, or one whose worker vanished; only one caller can win."""
    return _claim_one(delivery_id) is not None


def _claim_one(delivery_id) -> uuid.UUID | None:
    """Claim one delivery under a fresh fencing token; the token, or None if another holds
    it or it is not due."""
    now, token = dbclock.now(), uuid.uuid4()
    claimable = Q(state=DeliveryState.PENDING, next_attempt_at__lte=now) | Q(
        state=DeliveryState.IN_PROGRESS, lease_until__lt=now
    )
    claimed = Delivery.objects.filter(claimable, pk=delivery_id).update(
        state=DeliveryState.IN_PROGRESS, lease_until=now + LEASE, attempts=F("attempts") + 1,
        claim=token,
    )
    return token if claimed == 1 else None


def delivery_run(delivery_id) -> Delivery | None:
    """Make one attempt at a delivery if it can be claimed; return it as it then stands."""
    if _claim_one(delivery_id) is None:
        return None
    delivery = Delivery.objects.select_related("integration__form", "submission__form").get(
        pk=delivery_id
    )
    if _disabled(delivery):
        return _finish(delivery, DeliveryState.FAILED, "Integration is disabled")
    delivery = _record(delivery, *_attempt(delivery))
    _after_attempt(delivery)
    return delivery


def _disabled(delivery: Delivery) -> bool:
    return not delivery.integration.enabled and delivery.event_type != TEST


def _after_attempt(delivery: Delivery) -> None:
    if delivery.state == DeliveryState.PENDING:
        wait = (delivery.next_attempt_at - dbclock.now()).total_seconds()
        if wait <= COUNTDOWN_LIMIT_SECONDS:
            delivery_retry_later(delivery.pk, max(wait, 0))


def retry_delay(attempts: int, retry_after: float | None) -> float | None:
    """Seconds until the next attempt, or None when every attempt is spent."""
    delays = settings.DELIVERY_RETRY_DELAYS
    if attempts > len(delays):
        return None
    delay = delays[attempts - 1] * (1 + random.uniform(0, 0.1))
    return max(delay, retry_after or 0)


def _fenced(delivery: Delivery, **changes: Any) -> bool:
    """Write ``changes`` to the delivery if its claim is still this one's; whether it was.
    A claim that lapsed (another worker took the row since) records nothing."""
    written = Delivery.objects.filter(pk=delivery.pk, claim=delivery.claim).update(**changes)
    if not written:
        logger.warning("Delivery %s: the claim lapsed; the attempt is not recorded",
                       delivery.pk)
        return False
    for name, value in changes.items():
        setattr(delivery, name, value)
    return True


def _finish(delivery: Delivery, state: str, error: str | None) -> Delivery:
    _fenced(delivery, state=state, last_error=error, finished_at=dbclock.now(),
            lease_until=None)
    return delivery


@transaction.atomic
def _record(
    delivery: Delivery, outcome: transports.Outcome, started: datetime, duration_ms: int
) -> Delivery:
    """Record one attempt, fenced by the delivery's claim: the row's new state first, and
    the attempt, the integration's health and any alert only if this claim still holds it."""
    is_test = delivery.event_type == TEST
    delay = (
        None
        if (outcome.ok or outcome.permanent or is_test)
        else retry_delay(delivery.attempts, outcome.retry_after)
    )
    if outcome.ok:
        held = _fenced(delivery, state=DeliveryState.DELIVERED, last_error=None,
                       finished_at=dbclock.now(), lease_until=None)
    elif delay is None:
        held = _fenced(delivery, state=DeliveryState.FAILED, last_error=_short(outcome.error),
                       finished_at=dbclock.now(), lease_until=None)
    else:
        due = dbclock.now() + timedelta(seconds=delay)
        # A short wait is queued with a countdown right away; a long one waits for the sweeper.
        held = _fenced(delivery, state=DeliveryState.PENDING, last_error=_short(outcome.error),
                       next_attempt_at=due,
                       queued_at=due if delay <= COUNTDOWN_LIMIT_SECONDS else None,
                       lease_until=None)
    if not held:
        return delivery
    DeliveryAttempt.objects.create(
        delivery=delivery,
        number=delivery.attempts,
        started_at=started,
        duration_ms=duration_ms,
        succeeded=outcome.ok,
        status_code=outcome.status_code,
        error=_short(outcome.error),
    )
    _update_integration(delivery.integration, outcome, started)
    if delivery.state == DeliveryState.FAILED and not is_test:
        alerts.failed_for_good(
            delivery.integration, form_name=_form_name(delivery),
            error=_short(outcome.error), disabled=outcome.disable,
        )
    return delivery


def _update_integration(integration: Integration, outcome: transports.Outcome, at) -> None:
    """Health follows the latest attempt by start time, so a slow older attempt that
    finishes last cannot overwrite it. Other changes (410, new tokens) always apply."""
    at_value = connection.ops.adapt_datetimefield_value(at)
    rawsql.execute(
        f"UPDATE {rawsql.table(Integration)} SET status = %s, last_run_at = %s, last_error = %s "
        "WHERE id = %s AND (last_run_at IS NULL OR last_run_at <= %s)",
        [
            Health.HEALTHY if outcome.ok else Health.FAILING,
            at_value,
            None if outcome.ok else _short(outcome.error),
            rawsql.db_id(Integration, integration.pk),
            at_value,
        ],
    )
    changes: dict[str, Any] = {}
    if outcome.disable:
        changes["enabled"] = False
        if integration.hook:  # a subscription whose target is gone ends (contract)
            transaction.on_commit(lambda: Integration.objects.filter(pk=integration.pk).delete())
    if outcome.secrets is not None:
        integration.set_secrets({**integration.secrets, **outcome.secrets})
        changes["secrets_encrypted"] = integration.secrets_encrypted
    if changes:
        Integration.objects.filter(pk=integration.pk).update(**changes)


def _form_name(delivery: Delivery) -> str:
    if delivery.payload is not None:  # the event of a change, its submission perhaps gone
        return delivery.payload["data"]["formName"]
    return delivery.submission.form.name if delivery.submission else ""


def _short(error: str | None) -> str | None:
    return error[:500] if error else None


def delivery_sweep(limit: int = 1000) -> int:
    """Re-queue due deliveries that have no live message, and those of vanished workers."""
    now = dbclock.now()
    unsent = Q(queued_at__isnull=True) | Q(queued_at__lt=now - REQUEUE_AFTER)
    due = Q(state=DeliveryState.PENDING, next_attempt_at__lte=now) & unsent
    abandoned = Q(state=DeliveryState.IN_PROGRESS, lease_until__lt=now)
    ids = list(
        Delivery.objects.filter(due | abandoned)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:limit]
    )
    if ids:
        Delivery.objects.filter(pk__in=ids).update(queued_at=now)
        nudge.take_flag()  # it may be up with its message lost: this message replaces it
        deliveries_queue(ids, force=True, sweeping=True)
    elif _orphaned(now):
        deliveries_queue([], force=True, sweeping=True)
    return len(ids)


ORPHANED_AFTER = timedelta(seconds=5)


def _orphaned(now) -> bool:
    """Rows due a while with no worker on them: commits that saw a worker's flag up left
    them to that worker, and it died (a live one keeps the flag up, and takes them within
    milliseconds). Their message counts as sent, so the check above does not see them."""
    if nudge.is_up():
        return False
    stale = now - ORPHANED_AFTER
    return Delivery.objects.filter(state=DeliveryState.PENDING,
                                   next_attempt_at__lte=stale).exists()


def not_retryable() -> ServiceError:
    return ServiceError(
        "not_retryable",
        "Only a failed delivery of an enabled integration can be retried.",
        409,
    )


def delivery_retry(*, owner: User, delivery_id: str) -> Delivery:
    """One failed delivery of the owner's, given a fresh set of attempts; 409 for any other
    (pending, delivered, a test send, or its integration disabled)."""
    try:
        delivery = Delivery.objects.get(pk=uuid.UUID(str(delivery_id)), integration__owner=owner)
    except (ValueError, Delivery.DoesNotExist):
        raise ServiceError(*default_error(404), 404) from None
    if not deliveries_retry(delivery_ids=[delivery.pk]):
        raise not_retryable()
    delivery.refresh_from_db()
    return delivery


def deliveries_retry(
    *,
    integration_id: str | uuid.UUID | None = None,
    form: Form | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    delivery_ids: list | None = None,
) -> int:
    """Give failed submission deliveries a fresh set of attempts; return how many.

    A disabled integration's deliveries are left as they are: they would only fail again at
    once. Enabling the integration first makes them retryable.
    """
    rows = Delivery.objects.filter(
        state=DeliveryState.FAILED, integration__enabled=True
    ).exclude(event_type=TEST)
    if integration_id is not None:
        rows = rows.filter(integration_id=integration_id)
    if form is not None:
        rows = rows.filter(submission__form=form)
    if since is not None:
        rows = rows.filter(created_at__gte=since)
    if until is not None:
        rows = rows.filter(created_at__lt=until)
    if delivery_ids is not None:
        rows = rows.filter(pk__in=delivery_ids)
    ids = list(rows.values_list("pk", flat=True))
    now = dbclock.now()
    count = Delivery.objects.filter(pk__in=ids, state=DeliveryState.FAILED).update(
        state=DeliveryState.PENDING,
        attempts=0,
        next_attempt_at=now,
        queued_at=now,
        finished_at=None,
        last_error=None,
    )
    if ids:
        deliveries_queue(ids, force=True)
    return count

