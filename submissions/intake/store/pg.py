"""Storing an admitted submission in one statement, on PostgreSQL with Redis.

When Redis has already decided the quota, nothing else needs the transaction: the submission,
what the hooks write on acceptance (integrations: its deliveries) and its usage shard are
written by one statement with data-modifying CTEs, in autocommit. One round trip instead of
five (BEGIN, three writes, COMMIT), and no ORM work on the hot path. Foreign keys are deferred
by Django, so they are checked at the statement's end, when the submission exists.

The usage shard is counted first, and only under the generation the submission was admitted
by (accounts/quota.py, ``record_fenced``); the submission and the hooks' rows are inserted
from what that count answers, so a fenced submission writes nothing at all and
``quota.Fenced`` is raised.

Otherwise (not reserved by Redis, or inside a transaction a caller opened) it is orm.py's
transaction, under the owner's row lock.
"""

from __future__ import annotations

import json

from django.db import connection

from accounts import quota
from submissions import hooks
from submissions.intake.admission import Ticket
from submissions.intake.store import orm
from submissions.models import Submission


def store(submission: Submission, ticket: Ticket) -> Submission:
    if not ticket.reserved or ticket.generation is None or connection.in_atomic_block:
        return orm.store(submission, ticket, lock_owner=True)
    ids = _in_one_statement(submission, ticket.month, ticket.generation)
    for receiver, answered in zip(hooks.receivers, ids, strict=True):
        receiver.accepted_committed(answered or [])
    return submission


def _in_one_statement(submission: Submission, month, generation: int) -> list:
    """Stores ``submission`` (its submitted_at set from the row); what each hook's part
    answered, in the order of ``hooks.receivers``."""
    form = submission.form
    usage_sql, usage_params = quota.record_fenced(form.counted_on_id, month, generation)
    parts = [receiver.accepted_sql(submission.pk, form.account_wide_owner_id, form.pk,
                                   only_if="EXISTS (SELECT 1 FROM stored)")
             for receiver in hooks.receivers]
    hooks_sql = "".join(f", hook{index} AS ({sql})" for index, (sql, _) in enumerate(parts))
    answers = "".join(f", (SELECT array_agg(id) FROM hook{index})" for index in range(len(parts)))
    sql = (
        f"WITH counted AS ({usage_sql}), stored AS (INSERT INTO {Submission._meta.db_table} "
        "(id, form_id, data, ip, user_agent, origin, spam, subject) "
        "SELECT %s, %s, %s::jsonb, %s::inet, %s, %s, %s::jsonb, %s FROM counted "
        f"RETURNING submitted_at){hooks_sql} "
        f"SELECT stored.submitted_at{answers} FROM stored"
    )
    params = [
        *usage_params,
        submission.pk,
        form.pk,
        json.dumps(submission.data),
        submission.ip,
        submission.user_agent,
        submission.origin,
        None if submission.spam is None else json.dumps(submission.spam),
        submission.subject,
        *(param for _, part_params in parts for param in part_params),
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        raise quota.Fenced()
    submission.submitted_at = row[0]
    return list(row[1:])
