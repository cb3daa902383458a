"""The monthly submission limit: exact under concurrency, without one hot row per account.

The record is the database: ``UsageShard`` rows, one added to per accepted submission inside
the submission's own transaction. The decision takes no database lock:
- with Redis, an atomic counter per account and month, checked and counted in one step by the
  intake script (submissions/intake/admission/), seeded from the record when it is missing;
- without Redis (the embedded SQLite setup), the check runs inside the submission's
  transaction, which SQLite runs one at a time anyway.

A Redis counter can be lost (a flush, a restart) while requests it admitted are still running.
So every seeding of a counter moves the month's **generation** on in the record first (all the
month's shards carry it), and a submission admitted under a counter is stored only while its
generation is still the record's (``record_fenced``): one admitted by a counter that is gone is
not stored, and is admitted again by the new one (docs/exactness.md).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max, Sum

from accounts.models import UsageShard, User, current_month
from core.infra import rawsql, sequences

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
    return UsageShard.objects.filter(user_id=user_id, month=month or current_month()).total()


def used_under(user_id, month: date) -> tuple[int, int]:
    """The recorded count and the generation it was read under, in one statement."""
    rows = UsageShard.objects.filter(user_id=user_id, month=month)
    read = rows.aggregate(total=Sum("count"), generation=Max("generation"))
    return read["total"] or 0, read["generation"] or 0


def record_insert(user_id, month: date) -> tuple[str, list]:
    """SQL and parameters that count one submission on a shard picked at random."""
    table = UsageShard._meta.db_table
    sql = (
        f"INSERT INTO {table} (user_id, month, shard, count, generation) "
        "VALUES (%s, %s, %s, 1, 0) "
        f"ON CONFLICT (user_id, month, shard) DO UPDATE SET count = {table}.count + 1"
    )
    return sql, [rawsql.db_id(User, user_id), month, random.randrange(SHARDS)]


class Fenced(Exception):
    """The record's generation is no longer the one the submission was admitted under: the
    counter that admitted it was seeded again meanwhile. Nothing was stored."""


def record_fenced(user_id, month: date, generation: int) -> tuple[str, list]:
    """SQL and parameters that count one submission on a shard picked at random, only if the
    month is still at ``generation``; a row answered means it was counted. An UPDATE only: the
    seeding that handed out the generation made every shard (a missing one fences too).

    A seeding holds the shard while it moves the generation on: this waits for it, and then
    sees the new generation."""
    table = UsageShard._meta.db_table
    sql = (
        f"UPDATE {table} SET count = count + 1 WHERE user_id = %s AND month = %s AND shard = %s "
        "AND generation = %s RETURNING 1"
    )
    return sql, [rawsql.db_id(User, user_id), month, random.randrange(SHARDS), generation]


def record(user_id, month: date, generation: int | None = None) -> None:
    """Count one submission, inside its transaction; with a ``generation`` (admitted by the
    Redis counter), only under it, else ``Fenced`` is raised."""
    with connection.cursor() as cursor:
        if generation is None:
            cursor.execute(*record_insert(user_id, month))
            return
        cursor.execute(*record_fenced(user_id, month, generation))
        if cursor.fetchone() is None:
            raise Fenced()


@dataclass
class LockedMonth:
    """One account's month with every usage shard locked: its generation and recorded count."""

    user_id: Any
    month: date
    generation: int
    recorded: int

    def move_on(self, past: int = 0, *, reset: bool = False) -> int:
        """Move the generation past the record's and ``past`` (the highest a counter was
        seeded under): a submission admitted under an older one is not stored from now on.
        ``reset``: zero the record too (an operator's action)."""
        self.generation = unused_generation(max(self.generation, past) + 1)
        rows = UsageShard.objects.filter(user_id=self.user_id, month=self.month)
        rows.update(generation=self.generation, **({"count": 0} if reset else {}))
        if reset:
            self.recorded = 0
        return self.generation


# A sequence (PostgreSQL; accounts/migrations/0015) that every generation is drawn from.
GENERATIONS = "accounts_usage_generation"


def unused_generation(at_least: int) -> int:
    """A generation no seeding has handed out before, ``at_least`` or more. A seeding sets its
    counter in Redis before it commits; if the commit then fails (a lost connection, a killed
    process, the counter's answer lost to a timeout), the counter stays under a generation the
    record never reached, and requests are admitted under it. Handing that generation out
    again (after a flush, or by the database's fence, which does not see Redis) would let
    them store under a counter that never counted them. A sequence is not rolled back."""
    return sequences.draw_at_least(GENERATIONS, at_least)


@contextmanager
def month_locked(user_id, month: date) -> Iterator[LockedMonth]:
    """A transaction holding all the month's shards, for a Redis counter to be seeded from the
    record (submissions/intake/admission/): the counter is set before the locks go, so a submission
    admitted under it and storing meanwhile waits for them and then finds its generation.

    Each shard is made if missing, then all are locked in shard order, so two seedings never
    deadlock (a submission holds one shard at most). The locks wait for every submission being
    stored on them: the count read under them includes those."""
    with transaction.atomic():
        UsageShard.objects.bulk_create(
            [UsageShard(user_id=user_id, month=month, shard=n) for n in range(SHARDS)],
            ignore_conflicts=True,
        )
        rows = UsageShard.objects.filter(user_id=user_id, month=month)
        locked = list(rows.select_for_update().order_by("shard").values_list("generation",
                                                                             "count"))
        yield LockedMonth(user_id, month, generation=max(held for held, _ in locked),
                          recorded=sum(count for _, count in locked))
