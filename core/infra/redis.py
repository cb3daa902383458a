"""One Redis client per process for the hot paths that need more than the cache API (atomic
scripts, flags). None without REDIS_URL: callers then use the database instead.

While Redis is away the same callers fall back to the database (and to this process's memory
for rate windows): after one failure, Redis is left alone for a few seconds, so requests in
the meantime do not each wait for a connection timeout.
"""

from __future__ import annotations

import logging
from functools import cache
from typing import Any

import redis
from django.conf import settings
from redis.exceptions import RedisError

from core.infra.breaker import Breaker

logger = logging.getLogger(__name__)

PAUSE_SECONDS = 5.0
_breaker = Breaker(PAUSE_SECONDS)

Unavailable = RedisError  # what a call raises when Redis is away (connection, timeout, ...)


def available() -> bool:
    """False for a few seconds after a failure."""
    return _breaker.open()


def failed(error: Exception, what: str) -> None:
    """Note a failed call: callers fall back until the pause is over."""
    if _breaker.open():
        logger.warning("Redis unavailable (%s), falling back for %gs: %s", what, PAUSE_SECONDS,
                       error)
    _breaker.trip()


def recovered() -> None:
    """Try Redis again at once (tests; an operator's shell)."""
    _breaker.reset()


def guarded(call, fallback, what: str):
    """``call()``, or ``fallback`` while a configured Redis is away (or when the call finds it
    away): the one place a caller's Redis-or-fallback choice is made."""
    if settings.REDIS_URL and not available():
        return fallback
    try:
        return call()
    except Unavailable as error:
        failed(error, what)
        return fallback


def attempt(call, what: str) -> tuple[bool, Any]:
    """``(True, call(client))``, or ``(False, None)`` when Redis is not configured, is away, or
    the call finds it away: for callers whose fallback is the database."""
    redis_client = client()
    if redis_client is None or not available():
        return False, None
    try:
        return True, call(redis_client)
    except Unavailable as error:
        failed(error, what)
        return False, None


@cache
def client() -> redis.Redis | None:
    if not settings.REDIS_URL:
        return None
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2, health_check_interval=30
    )
