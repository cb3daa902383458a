"""One Redis client per process for the hot paths that need more than the cache API (atomic
scripts, flags). None without REDIS_URL: callers then use the database instead."""

from __future__ import annotations

from functools import cache

import redis
from django.conf import settings


@cache
def client() -> redis.Redis | None:
    if not settings.REDIS_URL:
        return None
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2, health_check_interval=30
    )
