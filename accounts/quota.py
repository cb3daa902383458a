"""The monthly submission limit: exact under concurrency, without one hot row per account.

The record is the database: ``UsageShard`` rows, one added to per accepted submission inside
the submission's own transaction. The decision takes no database lock:
- with Redis, an atomic counter per account and month, checked and counted in one step by the
  intake script (submissions/admission.py), seeded from the record when it is missing;
- without Redis (the embedded SQLite setup), the check runs inside the submission's
  transaction, which SQLite runs one at a time anyway.
"""

from __future__ import annotations

import functools
import random
from datetime import date

from django.conf import settings
from django.db import connection
from django.db.models import Sum

from accounts.models import UsageShard, User, current_month
from core.infra import rawsql

SHARDS = 16
# Long enough to outlive its month; a missing key is seeded again from the record.
KEY_TTL_SECONDS = 40 * 24 * 3600


def limit_of(user: User) -> int:
    if user.monthly_submission_limit is not None:
        return user.monthly_submission_limit
    return settings.DEFAULT_MONTHLY_SUBMISSION_LIMIT


@functools.lru_cache(maxsize=4096)  # formatting the month cost a percent of intake's CPU
def redis_key(user_id, month: date) -> str:
    return f"formflow:quota:{user_id}:{month:%Y-%m}"


def used(user_id, month: date | None = None) -> int:
    """Submissions counted for the account in ``month`` (default: this month), as recorded."""
    rows = UsageShard.objects.filter(user_id=user_id, month=month or current_month())
    return rows.aggregate(total=Sum("count"))["total"] or 0


def record_insert(user_id, month: date) -> tuple[str, list]:
    """SQL and parameters that count one submission on a shard picked at random."""
    table = UsageShard._meta.db_table
    sql = (
        f"INSERT INTO {table} (user_id, month, shard, count) VALUES (%s, %s, %s, 1) "
        f"ON CONFLICT (user_id, month, shard) DO UPDATE SET count = {table}.count + 1"
    )
    return sql, [rawsql.db_id(User, user_id), month, random.randrange(SHARDS)]


def record(user_id, month: date) -> None:
    """Count one submission, inside its transaction."""
    with connection.cursor() as cursor:
        cursor.execute(*record_insert(user_id, month))


def reset(user: User) -> None:
    """Give the account its whole monthly limit back (an operator's action): the record. The
    Redis counter follows through submissions/admission.py's ``reset``."""
    UsageShard.objects.filter(user=user, month=current_month()).delete()
