"""Handing messages to the Celery broker without letting an outage hold requests."""

from __future__ import annotations

import logging

from kombu.exceptions import OperationalError

from config.breaker import Breaker

logger = logging.getLogger(__name__)


breaker = Breaker(pause_seconds=30.0)


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
