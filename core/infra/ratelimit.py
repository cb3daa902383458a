"""Fixed-window counters in the shared cache (Redis when configured), via django-ratelimit."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

from django.core.cache import cache
from django_ratelimit.core import get_usage

from core.errors import retry_later
from core.infra import redis


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
        if redis.available():
            try:
                return cache.get(self._key()[0]) or 0
            except redis.Unavailable as error:
                redis.failed(error, f"reading window {self.name}")
        return _local.count(self.name, self.seconds)

    def add(self) -> int:
        """Count one; while the shared cache is away, in this process's memory."""
        if redis.available():
            key, left = self._key()
            try:
                cache.add(key, 0, timeout=left)
                return cache.incr(key)
            except redis.Unavailable as error:
                redis.failed(error, f"counting window {self.name}")
        return _local.add(self.name, self.seconds)[0]

    def retry_after(self) -> int:
        return self._key()[1]

    def clear(self) -> None:
        """Forget the current window's count, in the shared cache and in this process."""
        _local.clear(self.name, self.seconds)
        if redis.available():
            try:
                cache.delete(self._key()[0])
            except redis.Unavailable as error:
                redis.failed(error, f"clearing window {self.name}")


@dataclass(frozen=True)
class Rolling:
    """A count over the last ``seconds`` (not a fixed window, which lets twice the limit
    through around its edge): kept in ``slices`` fixed slices plus the current one, so any
    span of ``seconds`` ending now lies within the slices summed. It never undercounts; it
    may count up to one slice more than the span."""

    name: str
    seconds: int
    slices: int = 24

    def _size(self) -> int:
        return self.seconds // self.slices

    def _indexes(self, moment: float) -> range:
        index = int(moment // self._size())
        return range(index - self.slices, index + 1)

    def _key(self, index: int) -> str:
        return f"rolling:{self.name}:{index}"

    def _counts(self, moment: float) -> dict[int, int]:
        indexes = self._indexes(moment)
        if redis.available():
            try:
                found = cache.get_many([self._key(i) for i in indexes])
                return {i: int(found.get(self._key(i)) or 0) for i in indexes}
            except redis.Unavailable as error:
                redis.failed(error, f"reading rolling count {self.name}")
        return _local_rolling.counts(self.name, indexes)

    def add(self) -> int:
        """Count one now; the total over the last ``seconds``, this one included. The current
        slice's part is the increment's own answer, so of tries at once each gets its own
        number (as with ``Window.add``); the earlier slices no longer change."""
        moment = now()
        current = self._indexes(moment)[-1]
        mine = None
        if redis.available():
            key = self._key(current)
            try:
                cache.add(key, 0, timeout=self.seconds + 2 * self._size())
                mine = cache.incr(key)
            except redis.Unavailable as error:
                redis.failed(error, f"counting rolling {self.name}")
        if mine is None:
            mine = _local_rolling.add(self.name, current, 1)
        earlier = self._counts(moment)
        earlier.pop(current, None)
        return mine + sum(earlier.values())

    def undo(self) -> None:
        """Take back one counted by ``add`` a moment ago (a try refused: it was no try)."""
        current = self._indexes(now())[-1]
        if redis.available():
            try:
                cache.decr(self._key(current))
                return
            except ValueError:  # expired in between: nothing to take back
                return
            except redis.Unavailable as error:
                redis.failed(error, f"uncounting rolling {self.name}")
        _local_rolling.add(self.name, current, -1)

    def retry_after(self, limit: int) -> int:
        """Seconds until one more would keep the total within ``limit``."""
        moment = now()
        counts = self._counts(moment)
        total = sum(counts.values())
        for index in sorted(counts):
            if total + 1 <= limit:
                break
            total -= counts[index]
            leaves = (index + self.slices + 1) * self._size()
            if total + 1 <= limit:
                return max(1, math.ceil(leaves - moment))
        return 1

    def clear(self) -> None:
        """Forget every slice, in the shared cache and in this process."""
        indexes = self._indexes(now())
        _local_rolling.clear(self.name)
        if redis.available():
            try:
                cache.delete_many([self._key(i) for i in indexes])
            except redis.Unavailable as error:
                redis.failed(error, f"clearing rolling {self.name}")


class LocalRolling:
    """Rolling counts in this process's memory while the shared cache is away."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, dict[int, int]] = {}

    def add(self, name: str, index: int, amount: int) -> int:
        """Add ``amount`` to ``name``'s slice ``index``: that slice's new count."""
        with self._lock:
            if len(self._counts) > 100_000:  # drop the oldest names rather than grow
                self._counts = dict(list(self._counts.items())[50_000:])
            slices = self._counts.setdefault(name, {})
            count = slices[index] = max(0, slices.get(index, 0) + amount)
            for old in [i for i in slices if i < index - 1000]:
                del slices[old]
            return count

    def counts(self, name: str, indexes: range) -> dict[int, int]:
        with self._lock:
            slices = self._counts.get(name, {})
            return {i: slices.get(i, 0) for i in indexes}

    def clear(self, name: str) -> None:
        with self._lock:
            self._counts.pop(name, None)


class LocalWindows:
    """Fixed windows in this process's memory: the fallback while the shared cache is away.
    Each process then counts on its own, so the limit holds per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, int], int] = {}

    def add(self, key: str, seconds: int) -> tuple[int, int]:
        """Count one in ``key``'s current window: the count, and the seconds it has left."""
        moment = now()
        index = int(moment // seconds)
        with self._lock:
            if len(self._counts) > 100_000:  # drop past windows rather than grow
                self._counts = {k: v for k, v in self._counts.items() if k[1] == index}
            count = self._counts[key, index] = self._counts.get((key, index), 0) + 1
        return count, max(1, math.ceil((index + 1) * seconds - moment))

    def count(self, key: str, seconds: int) -> int:
        with self._lock:
            return self._counts.get((key, int(now() // seconds)), 0)

    def clear(self, key: str, seconds: int) -> None:
        with self._lock:
            self._counts.pop((key, int(now() // seconds)), None)


_local = LocalWindows()  # this process's windows while the shared cache is away
_local_rolling = LocalRolling()


@dataclass(frozen=True)
class Usage:
    limit: int
    remaining: int
    reset_at: int  # Unix seconds when the window ends
    exceeded: bool

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil(self.reset_at - time.time()))


PERIOD_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def hit(group: str, key: str, limit: int, period: str = "m") -> Usage:
    """Count one request against ``limit`` per ``period`` for ``key``; atomic in the cache,
    or, while the shared cache is away, in this process's memory."""
    if redis.available():
        try:
            usage = get_usage(
                None,  # it reads a request only for method rules and named keys: none here
                group=group,
                key=lambda _group, _request: key,
                rate=f"{limit}/{period}",
                increment=True,
            )
        except redis.Unavailable as error:
            redis.failed(error, f"rate limit {group}")
        else:
            return _usage(limit, usage["count"], max(1, math.ceil(usage["time_left"])))
    count, left = _local.add(f"{group}:{key}", PERIOD_SECONDS[period])
    return _usage(limit, count, left)


def _usage(limit: int, count: int, seconds_left: int) -> Usage:
    return Usage(
        limit=limit,
        remaining=max(0, limit - count),
        # The window's end: seconds_left is rounded up from the same clock.
        reset_at=int(now()) + seconds_left,
        exceeded=count > limit,
    )


def enforce(group: str, key: str, limit: int, period: str = "m") -> Usage:
    usage = hit(group, key, limit, period)
    if usage.exceeded:
        raise retry_later("rate_limited", "Too many requests. Try again later.", usage.retry_after)
    return usage
