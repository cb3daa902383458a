"""One writer at a time on SQLite, queued in this process instead of polled by the database.

SQLite takes one writer at a time, and makes the others poll with growing sleeps: under load
that turned into second-long tails. This process's threads queue here instead and get the
lock the moment it is free; only other processes (the worker) still meet the poll. On
PostgreSQL, and inside a transaction already open (which holds the lock it needs), it does
nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

_writer = threading.Lock()


@contextmanager
def one_writer() -> Iterator[None]:
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        yield
        return
    with _writer:
        yield
