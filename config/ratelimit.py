"""Fixed-window counters in the shared cache (Redis when configured), via django-ratelimit."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

from django.core.cache import cache
from django.http import HttpRequest
from django_ratelimit.core import get_usage

from config.errors import retry_later


def now() -> float:
    """The clock of the fixed windows (tests hold it still)."""
    return time.time()


@dataclass(frozen=True)
class Window:
    """A fixed window of ``seconds`` counted in the shared cache under ``name``."""

    name: str
    seconds: int

    def _key(self) -> tuple[str, int]:
        moment = now()
        index = int(moment // self.seconds)
        return f"window:{self.name}:{index}", max(1, int((index + 1) * self.seconds - moment))

    def count(self) -> int:
        return cache.get(self._key()[0]) or 0

    def add(self) -> int:
        key, left = self._key()
        cache.add(key, 0, timeout=left)
        return cache.incr(key)

    def retry_after(self) -> int:
        return self._key()[1]


class LocalWindows:
    """Fixed windows in this process's memory: the fallback while the shared cache is away.
    Each process then counts on its own, so the limit holds per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, int], int] = {}

    def hit(self, key: str, limit: int, seconds: int) -> int | None:
        """Count one request; the seconds to wait if it is over ``limit``, else None."""
        moment = now()
        index = int(moment // seconds)
        with self._lock:
            if len(self._counts) > 100_000:  # drop past windows rather than grow
                self._counts = {k: v for k, v in self._counts.items() if k[1] == index}
            count = self._counts[key, index] = self._counts.get((key, index), 0) + 1
        if count <= limit:
            return None
        return max(1, math.ceil((index + 1) * seconds - moment))


@dataclass(frozen=True)
class Usage:
    limit: int
    remaining: int
    reset_at: int  # Unix seconds when the window ends
    exceeded: bool

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil(self.reset_at - time.time()))


def hit(request: HttpRequest, group: str, key: str, limit: int, period: str = "m") -> Usage:
    """Count one request against ``limit`` per ``period`` for ``key``; atomic in the cache."""
    usage = get_usage(
        request,
        group=group,
        key=lambda _group, _request: key,
        rate=f"{limit}/{period}",
        increment=True,
    )
    count = usage["count"]
    return Usage(
        limit=limit,
        remaining=max(0, limit - count),
        reset_at=int(time.time()) + int(usage["time_left"]),
        exceeded=usage["should_limit"],
    )


def enforce(request: HttpRequest, group: str, key: str, limit: int, period: str = "m") -> Usage:
    usage = hit(request, group, key, limit, period)
    if usage.exceeded:
        raise retry_later("rate_limited", "Too many requests. Try again later.", usage.retry_after)
    return usage
