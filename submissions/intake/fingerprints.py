"""Where the spam filter notes the submissions it has seen (its duplicate check): chosen once,
at start. The one place intake's spam check meets a backend.

With Redis, one atomic SET NX, so two copies sent at once are told apart too, by every web
process; while Redis is away no copy is a duplicate, so a failed check never costs a
submission. Without Redis (the embedded setup, one web process), this process's memory,
through Django's cache.
"""

from __future__ import annotations

from typing import cast

from django.core.cache import cache
from redis import Redis

from core.infra import redis


class InMemory:
    def first_time(self, key: str, seconds: int) -> bool:
        return cache.add(key, 1, seconds)

    def forget(self, key: str) -> None:
        cache.delete(key)


class InRedis:
    def first_time(self, key: str, seconds: int) -> bool:
        client = _client()
        return redis.guarded(lambda: bool(client.set(key, 1, nx=True, ex=seconds)),
                             True, "the duplicate check")

    def forget(self, key: str) -> None:
        client = _client()
        redis.guarded(lambda: client.delete(key), None, "forgetting a fingerprint")


def _client() -> Redis:
    return cast(Redis, redis.client())  # chosen only where it is configured


seen: InRedis | InMemory = InMemory() if redis.client() is None else InRedis()
