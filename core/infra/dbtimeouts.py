"""Bounds on the web processes' own PostgreSQL sessions (contract, "Nothing waits forever").

A request must end within 30 s with an answer, whatever another session holds. Each web
session is set, when it connects, to give up on a row lock after LOCK_TIMEOUT, on a statement
after STATEMENT_TIMEOUT, and to be ended by the server if it sits in a transaction doing
nothing for IDLE_IN_TRANSACTION (a thread that died holding one must not hold its locks). A
request that meets one gets the 503 ``service_unavailable`` every database failure gets.

Those bounds are per statement, and a request may run several (a keyed submission waits on
its claim, then stores). So that waits never add up past the contract's 30 s, a statement
that starts less than STATEMENT_TIMEOUT before REQUEST_WAITS_END (20 s into the request) gets
only the time left as its ``statement_timeout`` and ``lock_timeout`` (at least
MIN_STATEMENT_MS), set before it and put back by the request's next statement outside that
tail. The fast path pays one clock
read per statement; only a request already slow pays a ``set_config`` per statement. A
transaction paced by its client is left alone. Behind PgBouncer in transaction mode
(DATABASE_SESSION_TIMEOUTS=false) session settings are off, and with them this cut: each
statement then has only the role's own bounds.

Readers paced by their client (an export download, the bulk stream) run one statement or one
transaction for as long as the client takes to read: ``paced_by_client`` lifts the statement
and idle bounds for that transaction alone; the lock bound stays.

Workers (and the beat inside them) are bounded more loosely: a stuck lock ends a task
after WORKER_LOCK_TIMEOUT (its rows are swept up again), no statement outlives the task's own
soft time limit, and a worker stopped in a transaction (SIGSTOP, a debugger, a frozen VM) is
ended by the server after WORKER_IDLE_IN_TRANSACTION, so the locks it held and the feed's
sequencer are freed. Management commands (migrate, shell, backup) are not bounded: a migration
may rightly run long.

A worker's writes (claims, attempts, delivered marks) commit without waiting for the disk
(``commit_worker_writes_asynchronously``). A crash of PostgreSQL can lose the last few of them,
which only makes a delivery due again (webhook-ids let receivers drop a repeat); submissions,
written by the web processes, keep waiting for the disk. Behind a pooler in transaction mode
(DATABASE_SESSION_TIMEOUTS=false) that setting would reach the web's transactions through the
pooler's shared server connections, so it is not made (give the workers a role of their own
with ``ALTER ROLE ... SET synchronous_commit = off`` to keep it).

With PgBouncer in transaction mode a session setting would leak to other clients: set
DATABASE_SESSION_TIMEOUTS=false and put the same settings on the database role (``ALTER ROLE
formflow SET lock_timeout = '5s'`` ...).

SQLite (the embedded setup) has one write lock for the whole file, and a connection waits for
it as long as its busy timeout (20 s in the settings, which workers and commands keep). A web
request's statements wait at most SQLITE_BUSY_TIMEOUT each, and none waits past
REQUEST_WAITS_END into the request: a keyed submission runs several write transactions, and
their waits must add up to less than 30 s with a CAPTCHA's 5 s and the answer still to come.
The wait is SQLite's own busy timeout (``PRAGMA busy_timeout``), which covers the ``BEGIN
IMMEDIATE`` that starts each transaction too; it is set again before a statement whenever the
time left in the request is shorter. A statement that meets the lock past that gives up with
"database is locked", the same 503 as above.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.core.signals import request_finished, request_started
from django.db import connection, connections, transaction
from django.db.backends.signals import connection_created

LOCK_MS = 5_000
LOCK_TIMEOUT = f"{LOCK_MS // 1000}s"
STATEMENT_MS = 10_000
STATEMENT_TIMEOUT = f"{STATEMENT_MS // 1000}s"
IDLE_IN_TRANSACTION = "30s"
WORKER_LOCK_TIMEOUT = "10s"
WORKER_STATEMENT_TIMEOUT = "60s"  # CELERY_TASK_SOFT_TIME_LIMIT
WORKER_IDLE_IN_TRANSACTION = "60s"
SQLITE_BUSY_TIMEOUT = 5.0  # seconds a web statement waits for SQLite's write lock
# Seconds into a request after which no statement waits (SQLite: for the lock; PostgreSQL:
# at all past MIN_STATEMENT_MS): a CAPTCHA (5 s) and the answer still fit in the contract's 30 s.
REQUEST_WAITS_END = 20.0
# PostgreSQL reads 0 as "no limit": a request past its end still gets a short, finite bound.
MIN_STATEMENT_MS = 100
CUT_SQL = ("SELECT set_config('statement_timeout', %s, false),"
           " set_config('lock_timeout', %s, false)")

BOUNDS_SQL = (
    "SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false),"
    " set_config('idle_in_transaction_session_timeout', %s, false)"
)
LIFTED_SQL = (
    "SELECT set_config('statement_timeout', '0', true),"
    " set_config('idle_in_transaction_session_timeout', '0', true)"
)


def bound_web_sessions() -> None:
    """Called once by the web entry point: every session it opens is bounded."""
    _bound_sessions([LOCK_TIMEOUT, STATEMENT_TIMEOUT, IDLE_IN_TRANSACTION])
    _bound_request_waits()


def bound_worker_sessions() -> None:
    """Called once as a worker starts (config/celery.py): its pool's processes inherit it."""
    _bound_sessions([WORKER_LOCK_TIMEOUT, WORKER_STATEMENT_TIMEOUT, WORKER_IDLE_IN_TRANSACTION])


def commit_worker_writes_asynchronously() -> None:
    """Called in each worker pool process as it starts (config/celery.py). Like the bounds,
    not behind a pooler in transaction mode: there a session setting would go on to the
    web's transactions, whose submissions must wait for the disk (left to the worker's role)."""
    if settings.DATABASE_SESSION_TIMEOUTS:
        connection_created.connect(_commit_asynchronously, weak=False)


def _commit_asynchronously(sender, connection, **_kwargs) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET synchronous_commit TO off")


def unbind_sessions() -> None:
    connection_created.disconnect(dispatch_uid=DISPATCH_UID)
    connection_created.disconnect(dispatch_uid=SQLITE_DISPATCH_UID)
    connection_created.disconnect(dispatch_uid=CUT_DISPATCH_UID)
    request_started.disconnect(dispatch_uid=REQUEST_DISPATCH_UID)
    request_finished.disconnect(dispatch_uid=REQUEST_DISPATCH_UID)
    for opened in connections.all(initialized_only=True):
        for wrapper in (_wait_for_lock, _cut_statement):
            if wrapper in opened.execute_wrappers:
                opened.execute_wrappers.remove(wrapper)


DISPATCH_UID = "formflow-db-bounds"
SQLITE_DISPATCH_UID = "formflow-sqlite-bounds"
CUT_DISPATCH_UID = "formflow-statement-cut"
REQUEST_DISPATCH_UID = "formflow-request-bounds"


def _bound_sessions(bounds: list[str]) -> None:
    if not settings.DATABASE_SESSION_TIMEOUTS:
        return

    def bound(sender, connection, **_kwargs) -> None:
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(BOUNDS_SQL, bounds)

    connection_created.connect(bound, weak=False, dispatch_uid=DISPATCH_UID)


# --- A request's waits, bounded by its deadline ---------------------------------------------
_request_began: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "request_began", default=None)


def _bound_request_waits() -> None:
    connection_created.connect(_bound_sqlite, weak=False, dispatch_uid=SQLITE_DISPATCH_UID)
    if settings.DATABASE_SESSION_TIMEOUTS:
        connection_created.connect(_bound_statements, weak=False, dispatch_uid=CUT_DISPATCH_UID)
    request_started.connect(_began, weak=False, dispatch_uid=REQUEST_DISPATCH_UID)
    request_finished.connect(_ended, weak=False, dispatch_uid=REQUEST_DISPATCH_UID)


def _began(**_kwargs: Any) -> None:
    _request_began.set(time.monotonic())


def _ended(**_kwargs: Any) -> None:
    _request_began.set(None)


def _seconds_left() -> float | None:
    """Seconds before REQUEST_WAITS_END, or None outside a request."""
    began = _request_began.get()
    return None if began is None else began + REQUEST_WAITS_END - time.monotonic()


# --- PostgreSQL: a statement in the request's tail gets only the time left --------------------
def _bound_statements(sender, connection, **_kwargs) -> None:
    if connection.vendor == "postgresql" and _cut_statement not in connection.execute_wrappers:
        connection.execute_wrappers.insert(0, _cut_statement)


def _cut_statement(execute, sql, params, many, context):
    db = context["connection"]
    if not getattr(db, "formflow_paced", False):
        wanted = _statement_milliseconds()
        if wanted < STATEMENT_MS or getattr(db, "formflow_statement_cut", False):
            # Set before every statement of the tail: a rolled-back transaction takes a SET
            # made inside it back with it, so a remembered value cannot be trusted.
            # The lock bound too: a deferred foreign key is checked at the commit that ends
            # an autocommit statement, where PostgreSQL has already stopped its timer.
            lock = min(wanted, LOCK_MS)
            # Django's error classes, as for the statement itself: a failure here (an aborted
            # transaction, a lost connection) must be the same 503, not a driver's error.
            with db.wrap_database_errors, db.connection.cursor() as cursor:
                cursor.execute(CUT_SQL, [f"{wanted}ms", f"{lock}ms"])
            # Put back inside a transaction, the bounds are put back again by the next
            # statement: a rollback would take them back to the cut, for every request after
            # on this kept connection.
            db.formflow_statement_cut = wanted < STATEMENT_MS or not db.get_autocommit()
    return execute(sql, params, many, context)


def _statement_milliseconds() -> int:
    left = _seconds_left()
    if left is None or left * 1000 >= STATEMENT_MS:
        return STATEMENT_MS
    return max(MIN_STATEMENT_MS, int(left * 1000))


# --- SQLite: the wait for the write lock -------------------------------------------------------
def _bound_sqlite(sender, connection, **_kwargs) -> None:
    if connection.vendor != "sqlite":
        return
    _set_busy_timeout(connection, _busy_milliseconds())
    # First in the list: Django's execute_wrapper() pops the last one when its block ends.
    if _wait_for_lock not in connection.execute_wrappers:
        connection.execute_wrappers.insert(0, _wait_for_lock)


def _wait_for_lock(execute, sql, params, many, context):
    """Before each statement (``BEGIN IMMEDIATE`` included): the wait for the lock, cut to
    what the request has left."""
    wanted = _busy_milliseconds()
    db = context["connection"]
    if getattr(db, "formflow_busy", None) != (db.connection, wanted):
        _set_busy_timeout(db, wanted)
    return execute(sql, params, many, context)


def _busy_milliseconds() -> int:
    """SQLITE_BUSY_TIMEOUT, or less when the request has less left before REQUEST_WAITS_END
    (in steps of 100 ms, so the last seconds do not reset it before every statement)."""
    left = _seconds_left()
    wait = SQLITE_BUSY_TIMEOUT if left is None else min(SQLITE_BUSY_TIMEOUT, left)
    return max(0, int(wait * 10)) * 100


def _set_busy_timeout(db, milliseconds: int) -> None:
    db.connection.execute(f"PRAGMA busy_timeout = {int(milliseconds)}")
    db.formflow_busy = (db.connection, milliseconds)


@contextmanager
def paced_by_client() -> Iterator[None]:
    """A transaction whose statement and idle time are its client's: no bound on either."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(LIFTED_SQL)
        # Its statements are the client's too: the request's tail cuts none of them.
        paced = getattr(connection, "formflow_paced", False)
        setattr(connection, "formflow_paced", True)  # noqa: B010  (not a declared attribute)
        try:
            yield
        finally:
            setattr(connection, "formflow_paced", paced)  # noqa: B010
