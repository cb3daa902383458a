"""The database's clock, for times that several machines compare: delivery leases and retry
times (contract, "Exactness under concurrency").

Every machine reads the same clock this way, however far its own has drifted: the offset
between this host's clock and the database's is measured with one query, kept 30 s, and
measured again at once if this host's clock jumps (a step by NTP, a changed time zone
setting). ``now()`` is ``core.clock.now()`` plus that offset, so tests that move the service's
clock move this one too. SQLite's clock is this host's: its offset is zero.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from core import clock

KEEP_SECONDS = 30.0
JUMP_SECONDS = 0.25
# Below this the clocks agree as well as a measurement over the network can tell (and as a
# lease needs): the offset is taken as zero, and a host in sync uses its own clock as it is.
NEGLIGIBLE = timedelta(milliseconds=10)

_measured = threading.local()


def now() -> datetime:
    return clock.now() + offset()


def offset() -> timedelta:
    """The database's clock less this host's, measured again when stale or when this host's
    clock moved otherwise than time did."""
    wall, mono = time.time(), time.monotonic()
    last = getattr(_measured, "last", None)
    if last is not None:
        then_wall, then_mono, value = last
        fresh = mono - then_mono < KEEP_SECONDS
        steady = abs((wall - then_wall) - (mono - then_mono)) < JUMP_SECONDS
        if fresh and steady:
            return value
    value = _measure()
    _measured.last = (time.time(), time.monotonic(), value)
    return value


def _measure() -> timedelta:
    if connection.vendor != "postgresql":
        return timedelta(0)
    before = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        (database,) = cursor.fetchone()
    after = timezone.now()
    measured = database - (before + (after - before) / 2)
    return measured if abs(measured) > NEGLIGIBLE else timedelta(0)


def forget() -> None:
    """Measure again at the next call (tests that change the database's clock)."""
    _measured.last = None
