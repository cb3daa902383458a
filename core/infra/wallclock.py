"""A hard wall-clock bound on a network call: the webhook and Google clients
(integrations/clients/http.py) and every SMTP session (accounts/smtp.py) run under it.

Socket timeouts are per operation: a read timeout is per recv, so a peer that sends a byte
every few seconds (a reply, an SMTP greeting, a TLS handshake) never trips one, and
``getaddrinfo`` has no timeout at all. So a call runs inside ``bounded(seconds)``: one
watchdog thread for the process sleeps until the nearest deadline and shuts down the sockets of
every call still running past its own, and whatever waited on them returns at once. Name
lookups run in a few threads of their own (``in_time``), and the call stops waiting for them at
its deadline (the thread ends when the resolver gives up).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import heapq
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

_in_flight = threading.local()


@dataclass(order=True)
class Watch:
    ends: float
    cut: threading.Event = field(compare=False, default_factory=threading.Event)
    done: bool = field(compare=False, default=False)
    # Copies (dup) of the sockets this call made: a copy stays usable when the call wraps the
    # original in TLS (which detaches it), and shutting a copy down shuts the connection down.
    sockets: list = field(compare=False, default_factory=list)
    holders: list = field(compare=False, default_factory=list)  # their .sock is read when cut


class _Watchdog:
    """One thread for the process: it sleeps until the nearest deadline, and cuts the
    sockets of every call still running past its own."""

    def __init__(self) -> None:
        self.watches: list[Watch] = []
        self.wake = threading.Condition()
        self.thread: threading.Thread | None = None

    def watch(self, ends: float) -> Watch:
        entry = Watch(ends)
        with self.wake:
            heapq.heappush(self.watches, entry)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="wallclock-watchdog",
                                               daemon=True)
                self.thread.start()
            # Only a deadline nearer than the one the thread sleeps until needs it awake. Calls
            # share one bound, so that is almost never: waking it for each call cost a fifth
            # of a delivery worker's CPU (a thread switch a delivery).
            if self.watches[0] is entry:
                self.wake.notify()
        return entry

    def _run(self) -> None:
        with self.wake:
            while True:
                while self.watches and self.watches[0].done:
                    heapq.heappop(self.watches)
                if not self.watches:
                    self.wake.wait()
                    continue
                left = self.watches[0].ends - time.monotonic()
                if left > 0:
                    self.wake.wait(left)
                    continue
                _cut(heapq.heappop(self.watches))


def _cut(entry: Watch) -> None:
    """Shut the call's sockets down (not close: the calling thread still owns them), so a
    recv or a handshake blocked on one returns at once."""
    entry.cut.set()
    held = [holder.sock for holder in list(entry.holders) if getattr(holder, "sock", None)]
    for sock in [*list(entry.sockets), *held]:
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


_watchdog = _Watchdog()


@contextlib.contextmanager
def bounded(seconds: float) -> Iterator[Watch]:
    """Run a call with a hard bound: past ``seconds`` its sockets are shut down. Yields the
    watch, whose ``cut`` says whether that happened."""
    entry = _watchdog.watch(time.monotonic() + seconds)
    _in_flight.entry = entry
    try:
        yield entry
    finally:
        entry.done = True
        _in_flight.entry = None
        for copy in entry.sockets:
            with contextlib.suppress(OSError):
                copy.close()


def left(default: float) -> float:
    """Seconds left to the running call's deadline; ``default`` outside a bounded call."""
    entry = getattr(_in_flight, "entry", None)
    return default if entry is None else entry.ends - time.monotonic()


def watch_socket(sock: socket.socket) -> None:
    """A socket the running call made: the watchdog can cut it, TLS on it included."""
    entry = getattr(_in_flight, "entry", None)
    if entry is not None:
        with contextlib.suppress(OSError):
            entry.sockets.append(sock.dup())
            if entry.cut.is_set():  # made after the deadline passed: cut it at once
                _cut(entry)


def watch_holder(holder: Any) -> None:
    """An object holding a socket as ``.sock`` (a kept-alive connection a pool hands out)."""
    entry = getattr(_in_flight, "entry", None)
    if entry is not None:
        entry.holders.append(holder)


# --- Name lookups --------------------------------------------------------------------------
_lookups: dict[int, concurrent.futures.ThreadPoolExecutor] = {}


def _lookup_pool() -> concurrent.futures.ThreadPoolExecutor:
    """This process's lookup threads, made on first use: a pool made before a fork (a
    prefork worker, a preloading web server) has no threads in the child. A few are enough: a
    lookup takes milliseconds, or never answers."""
    pid = os.getpid()
    if pid not in _lookups:
        _lookups[pid] = concurrent.futures.ThreadPoolExecutor(
            max_workers=8, thread_name_prefix="dns")
    return _lookups[pid]


def in_time(lookup: Callable[..., T], *args: Any, default: float, **kwargs: Any) -> T:
    """``lookup(*args, **kwargs)`` (a name lookup, which cannot be interrupted) waited for at
    most until the running call's deadline (``default`` seconds outside one).
    TimeoutError past it."""
    running = _lookup_pool().submit(lookup, *args, **kwargs)
    try:
        return running.result(timeout=max(0.0, left(default)))
    except concurrent.futures.TimeoutError:
        running.cancel()
        raise TimeoutError("no answer in time") from None


# --- A shorter budget for the calls made inside a block ------------------------------------
_budget: contextvars.ContextVar[float | None] = contextvars.ContextVar("budget", default=None)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Calls made inside wait at most ``seconds`` for the whole reply (a test send: 5 s)."""
    token = _budget.set(seconds)
    try:
        yield
    finally:
        _budget.reset(token)


def budget(default: float) -> float:
    """The bound for the next call: the block's ``deadline``, else ``default``."""
    return _budget.get() or default
