"""Storing an admitted submission in one statement, on PostgreSQL with Redis.

When Redis has already decided the quota, nothing else needs the transaction: the submission,
its deliveries and its usage shard are written by one statement with data-modifying CTEs, in
autocommit. One round trip instead of five (BEGIN, three writes, COMMIT), and no ORM work on
the hot path. Foreign keys are deferred by Django, so they are checked at the statement's end,
when the submission exists.

The usage shard is counted first, and only under the generation the submission was admitted
by (accounts/quota.py, ``record_fenced``); the submission and its deliveries are inserted from
what that count answers, so a fenced submission writes nothing at all and ``quota.Fenced`` is
raised.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import connection

from accounts import quota
from forms_app.models import Form
from integrations.delivery.enqueue import deliveries_insert
from submissions.models import Submission


def usable() -> bool:
    return connection.vendor == "postgresql" and not connection.in_atomic_block


def store(
    *, submission_id, form: Form, data: list[list[Any]], ip: str | None, user_agent: str,
    origin: str, month, generation: int, verdict: dict[str, Any] | None = None,
) -> tuple[Submission, list]:
    submission = Submission(
        id=submission_id, form=form, data=data, ip=ip, user_agent=user_agent, origin=origin,
        spam=verdict,
    )
    usage_sql, usage_params = quota.record_fenced(form.owner_id, month, generation)
    deliveries_sql, deliveries_params = deliveries_insert(
        submission.pk, form.owner_id, form.pk, only_if="EXISTS (SELECT 1 FROM stored)")
    sql = (
        f"WITH counted AS ({usage_sql}), stored AS (INSERT INTO {Submission._meta.db_table} "
        "(id, form_id, data, ip, user_agent, origin, spam) "
        "SELECT %s, %s, %s::jsonb, %s::inet, %s, %s, %s::jsonb FROM counted "
        f"RETURNING submitted_at), deliveries AS ({deliveries_sql}) "
        "SELECT stored.submitted_at, (SELECT array_agg(id) FROM deliveries) FROM stored"
    )
    params = [
        *usage_params,
        submission.pk,
        form.pk,
        json.dumps(data),
        ip,
        user_agent,
        origin,
        None if verdict is None else json.dumps(verdict),
        *deliveries_params,
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        raise quota.Fenced()
    submitted_at, delivery_ids = row
    submission.submitted_at = submitted_at
    return submission, delivery_ids or []
