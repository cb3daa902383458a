"""Bounds on the web processes' own PostgreSQL sessions (contract, "Nothing waits forever").

A request must end within 30 s with an answer, whatever another session holds. Each web
session is set, when it connects, to give up on a row lock after LOCK_TIMEOUT, on a statement
after STATEMENT_TIMEOUT, and to be ended by the server if it sits in a transaction doing
nothing for IDLE_IN_TRANSACTION (a thread that died holding one must not hold its locks). A
request that meets one gets the 503 ``service_unavailable`` every database failure gets.

The public endpoint's worst case stays under 30 s: an idempotency claim waits at most 10 s,
a CAPTCHA 5 s, and its few statements are bounded by these.

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
written by the web processes, keep waiting for the disk.

With PgBouncer in transaction mode a session setting would leak to other clients: set
DATABASE_SESSION_TIMEOUTS=false and put the same settings on the database role (``ALTER ROLE
formflow SET lock_timeout = '5s'`` ...).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connection, transaction
from django.db.backends.signals import connection_created

LOCK_TIMEOUT = "5s"
STATEMENT_TIMEOUT = "10s"
IDLE_IN_TRANSACTION = "30s"
WORKER_LOCK_TIMEOUT = "10s"
WORKER_STATEMENT_TIMEOUT = "60s"  # CELERY_TASK_SOFT_TIME_LIMIT
WORKER_IDLE_IN_TRANSACTION = "60s"

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


def bound_worker_sessions() -> None:
    """Called once as a worker starts (config/celery.py): its pool's processes inherit it."""
    _bound_sessions([WORKER_LOCK_TIMEOUT, WORKER_STATEMENT_TIMEOUT, WORKER_IDLE_IN_TRANSACTION])


def commit_worker_writes_asynchronously() -> None:
    """Called in each worker pool process as it starts (config/celery.py)."""
    connection_created.connect(_commit_asynchronously, weak=False)


def _commit_asynchronously(sender, connection, **_kwargs) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET synchronous_commit TO off")


def unbind_sessions() -> None:
    connection_created.disconnect(dispatch_uid=DISPATCH_UID)


DISPATCH_UID = "formflow-db-bounds"


def _bound_sessions(bounds: list[str]) -> None:
    if not settings.DATABASE_SESSION_TIMEOUTS:
        return

    def bound(sender, connection, **_kwargs) -> None:
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(BOUNDS_SQL, bounds)

    connection_created.connect(bound, weak=False, dispatch_uid=DISPATCH_UID)


@contextmanager
def paced_by_client() -> Iterator[None]:
    """A transaction whose statement and idle time are its client's: no bound on either."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(LIFTED_SQL)
        yield
