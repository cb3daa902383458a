"""Handing messages to the Celery broker without letting an outage hold requests."""

from __future__ import annotations

import logging
import time

from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)


class _BrokerBreaker:
    """After a failed publish, stop trying for a while: one request pays the timeout, and
    the requests after it are not slowed while the broker is away."""

    pause_seconds = 30.0
    closed_until = 0.0

    def open(self) -> bool:
        return time.monotonic() >= self.closed_until

    def trip(self) -> None:
        self.closed_until = time.monotonic() + self.pause_seconds

    def reset(self) -> None:
        self.closed_until = 0.0


breaker = _BrokerBreaker()


def publish(send, what: str) -> bool:
    """Hand one message to the broker unless it failed lately; False (logged) if not sent.

    ``send`` should publish with ``retry=False``: Celery's own publish retries would hold
    the request for seconds while the broker is away."""
    try:
        if not breaker.open():
            raise OperationalError("broker marked unavailable after a recent failure")
        send()
    except (OperationalError, OSError) as error:
        breaker.trip()
        logger.warning("Broker unavailable, %s not sent: %s", what, error)
        return False
    return True
