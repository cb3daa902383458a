"""A process told to stop (a worker's SIGTERM): whether it was, and by when it must be done.

The worker's wiring (config/celery.py) calls ``request`` when the signal comes, in whichever
process runs the tasks; long loops ask ``requested()`` before they start anything new, and
hand back what they hold instead. Set from a signal handler, which Python runs in the main
thread between two bytecodes, so a plain assignment is enough.
"""

from __future__ import annotations

import time

_stop_by: float | None = None  # monotonic seconds; None while nobody asked


def request(seconds: float) -> None:
    """Stop within ``seconds`` from now; a second request keeps the first, earlier bound."""
    global _stop_by
    if _stop_by is None:
        _stop_by = time.monotonic() + seconds


def requested() -> bool:
    return _stop_by is not None


def seconds_left() -> float | None:
    """Seconds until the process must be done, None while it may go on."""
    return None if _stop_by is None else _stop_by - time.monotonic()


def forget() -> None:
    """Back to running (tests, and a fresh pool process that inherited a request)."""
    global _stop_by
    _stop_by = None
