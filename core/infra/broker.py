"""Handing messages to the Celery broker without letting an outage hold requests."""

from __future__ import annotations

import logging

from kombu.exceptions import OperationalError

from core.infra.breaker import Breaker

logger = logging.getLogger(__name__)


breaker = Breaker(pause_seconds=30.0)


def publish(send, what: str, *, always_try: bool = False) -> bool:
    """Hand one message to the broker unless it failed lately; False (logged) if not sent.

    ``send`` should publish with ``retry=False``: Celery's own publish retries would hold
    the request for seconds while the broker is away. Only a real failure pauses the broker:
    a message skipped during the pause does not extend it, or a caller that publishes more
    often than the pause would never try again. ``always_try``: for background work (the
    sweeper), which may pay a connect timeout and must find the broker back at once."""
    if not always_try and not breaker.open():
        logger.warning("Broker unavailable, %s not sent: it failed less than %g s ago",
                       what, breaker.pause_seconds)
        return False
    try:
        send()
    except (OperationalError, OSError) as error:
        breaker.trip()
        logger.warning("Broker unavailable, %s not sent: %s", what, error)
        return False
    breaker.reset()
    return True
