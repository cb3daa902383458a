"""Where delivery meets a backend that needs code of its own, chosen once per process.

- SQL: a claim skips rows another worker has locked on PostgreSQL (``FOR UPDATE SKIP
  LOCKED``); SQLite has one writer, so the plain subqueries do. Each database makes a fresh
  id in SQL its own way.
- Recording a success: one statement on PostgreSQL (the fenced update and the attempt's row
  together, always the same text, so it is prepared once and needs no transaction around it,
  as a pooler in transaction mode wants; behind PgBouncer before 1.21 the preparing must be
  off, DATABASE_PREPARED_STATEMENTS=false); SQLite cannot update inside a WITH, so there it is
  the same two writes in one transaction.
- Threads of one batch at the database (``database_turn``): on PostgreSQL each works on its
  own connection side by side; SQLite has one writer for the whole file, so there they take
  turns on a lock of the process.
- The deliveries-due flag (integrations/delivery/nudge.py): a Redis key, or without Redis a
  file in DATA_DIR (the embedded setup runs on one machine).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from django.conf import settings
from django.db import connection, transaction

from core.infra import rawsql, redis
from integrations.models import Delivery, DeliveryAttempt, DeliveryState

if TYPE_CHECKING:
    from redis import Redis

T = TypeVar("T")


@dataclass(frozen=True)
class Dialect:
    new_id: str  # SQL that makes a fresh primary key
    skip_locked: str  # after a claim's row selection


POSTGRESQL = Dialect(new_id="gen_random_uuid()", skip_locked=" FOR UPDATE SKIP LOCKED")
SQLITE = Dialect(new_id="lower(hex(randomblob(16)))", skip_locked="")


@functools.cache
def sql() -> Dialect:
    return POSTGRESQL if connection.vendor == "postgresql" else SQLITE


@functools.cache
def database_turn() -> contextlib.AbstractContextManager[Any]:
    """What a thread of a batch (attempt.py) holds while it reads or writes. SQLite writes
    one transaction at a time: the threads queue on this lock rather than on SQLite's busy
    timeout (the in-memory test database shares one cache between connections, and there a
    second writer fails at once instead of waiting). Reentrant, so a step may call another."""
    return contextlib.nullcontext() if sql() is POSTGRESQL else threading.RLock()


class SuccessWriter(Protocol):
    def __call__(self, params: list) -> bool: ...


@functools.cache
def success_writer() -> SuccessWriter:
    """Records one delivered attempt, fenced by its claim; True if the claim still held the
    row. ``params``: finished at, delivery id, claim token, started at, duration (ms), status
    code, each as the database takes it."""
    return _success_in_one_statement if sql() is POSTGRESQL else _success_in_two


def _fenced_update() -> str:
    return (f"UPDATE {rawsql.table(Delivery)} SET state = '{DeliveryState.DELIVERED}', "
            "last_error = NULL, finished_at = %s, lease_until = NULL "
            f"WHERE id = %s AND claim = %s AND state = '{DeliveryState.IN_PROGRESS}' "
            "RETURNING id, attempts")


def _attempt_insert(source: str) -> str:
    return (f"INSERT INTO {rawsql.table(DeliveryAttempt)} (delivery_id, number, started_at, "
            f"duration_ms, succeeded, status_code) {source}")


@functools.cache
def _one_statement() -> str:
    return (f"WITH done AS ({_fenced_update()}) "
            + _attempt_insert("SELECT id, attempts, %s, %s, TRUE, %s FROM done")
            + " RETURNING delivery_id")


def _success_in_one_statement(params: list) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(_one_statement(), params)
        return cursor.fetchone() is not None


def _success_in_two(params: list) -> bool:
    finished_at, delivery_id, token, *attempt = params
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_fenced_update(), [finished_at, delivery_id, token])
        row = cursor.fetchone()
        if row is None:
            return False
        cursor.execute(_attempt_insert("VALUES (%s, %s, %s, %s, 1, %s)"), [*row, *attempt])
    return True


class FlagStore(Protocol):
    def set(self, *, only_if_down: bool, ttl: float) -> bool: ...
    def is_up(self, ttl: float) -> bool: ...
    def take(self) -> bool: ...


@functools.cache
def flag_store() -> FlagStore:
    return RedisFlag() if settings.REDIS_URL else FileFlag()


class RedisFlag:
    """The flag as a key with an expiry. While Redis is away the flag reads as down, and
    raising it answers True: the publish then fails too (the broker is Redis), and the
    sweeper sends later."""

    KEY = "formflow:deliveries:due"

    def set(self, *, only_if_down: bool, ttl: float) -> bool:
        client = _client()
        return bool(redis.guarded(
            lambda: client.set(self.KEY, 1, nx=only_if_down, px=int(ttl * 1000)),
            True, "raising the deliveries flag"))

    def is_up(self, ttl: float) -> bool:
        return _tried(lambda: bool(_client().exists(self.KEY)), False,
                      "reading the deliveries flag")

    def take(self) -> bool:
        # While Redis is away: False, and the sweeper looks again once it is back.
        return _tried(lambda: _client().delete(self.KEY) == 1, False,
                      "taking the deliveries flag down")


def _client() -> Redis:
    return cast("Redis", redis.client())  # chosen only with REDIS_URL, where it is never None


def _tried(call: Callable[[], T], fallback: T, what: str) -> T:
    """``call()``, or ``fallback`` if it finds Redis away. Tried even during the pause after
    a failure: the sweeper, a background caller, must see Redis back at once."""
    try:
        return call()
    except redis.Unavailable as error:
        redis.failed(error, what)
        return fallback


class FileFlag:
    """The flag as a file whose age is its expiry: one older than the TTL is down."""

    def path(self) -> str:
        return str(settings.DATA_DIR / "deliveries-due.flag")

    def is_up(self, ttl: float) -> bool:
        try:
            return time.time() - os.stat(self.path()).st_mtime < ttl
        except FileNotFoundError:
            return False

    def take(self) -> bool:
        try:
            os.unlink(self.path())
        except FileNotFoundError:
            return False
        return True

    def set(self, *, only_if_down: bool, ttl: float) -> bool:
        path = self.path()
        if not only_if_down:
            try:
                os.utime(path)
                return False
            except FileNotFoundError:
                pass
        for _ in range(2):
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
                return True
            except FileExistsError:
                try:
                    if time.time() - os.stat(path).st_mtime < ttl:
                        return False
                    os.unlink(path)  # expired: its worker is gone
                except FileNotFoundError:
                    pass
        return False
