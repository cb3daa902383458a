"""Leaving a service alone for a while after it failed."""

from __future__ import annotations

import time


class Breaker:
    """After a failed call, stop trying for ``pause_seconds``: one request pays the timeout,
    and the requests after it are not slowed while the service is away."""

    def __init__(self, pause_seconds: float) -> None:
        self.pause_seconds = pause_seconds
        self.closed_until = 0.0

    def open(self) -> bool:
        """Calls may go through."""
        return time.monotonic() >= self.closed_until

    def trip(self) -> None:
        self.closed_until = time.monotonic() + self.pause_seconds

    def reset(self) -> None:
        self.closed_until = 0.0
