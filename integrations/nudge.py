"""Telling workers that deliveries are due, without one broker message per submission.

A Celery message per submission cost the web process more than the rest of the submission, and
a worker per message more than the delivery. Instead a flag says "a worker is on it":
- after a commit that wrote deliveries, ``raise_flag()``; only the caller that raised it
  publishes a ``deliver_due`` message;
- a worker runs due deliveries until none is left, keeping the flag up; it lingers a moment
  (``DELIVERY_LINGER_SECONDS``), looking for new rows every few milliseconds, so under a
  steady load it never goes idle and nobody publishes at all;
- then it takes the flag down, waits ``grace()`` and looks once more: a commit that saw the
  flag up just before it came down finds a worker still looking.

So every committed delivery is either seen by a worker, or its commit raised the flag and
published a message. The web process remembers for ``NUDGE_SKIP_SECONDS`` that it saw the flag
up and skips the round trip meanwhile; the grace is longer than that, which keeps the rule
exact. The flag expires (``FLAG_TTL_SECONDS``) unless the worker holding it renews it, so a
worker that dies holding it stops no one: the next commit raises it again. If the broker loses
a message, the sweeper takes the flag down and publishes again. The flag lives in Redis, or
without it in a file in DATA_DIR (the embedded setup runs on one machine).
"""

from __future__ import annotations

import os
import time

from django.conf import settings

from core.infra import redis

KEY = "formflow:deliveries:due"
FLAG_TTL_SECONDS = 3.0
RENEW_EVERY_SECONDS = 1.0

_seen_up_at = -1e9  # when this process last saw the flag up (monotonic seconds)


def grace() -> float:
    """How long a worker looks on after taking the flag down: longer than the web's skip."""
    skip = settings.NUDGE_SKIP_SECONDS
    return skip * 1.5 + 0.01 if skip else 0.0


def raise_flag() -> bool:
    """After a commit that wrote deliveries: True if this call raised the flag (and must
    publish). Skipped while this process saw it up within NUDGE_SKIP_SECONDS. While Redis is
    away, True: the publish then fails too (the broker is Redis), and the sweeper sends later."""
    global _seen_up_at
    now = time.monotonic()
    if now - _seen_up_at < settings.NUDGE_SKIP_SECONDS:
        return False
    raised = _set(only_if_down=True)
    _seen_up_at = now
    return raised


def forget() -> None:
    """The message this process meant to send did not go: the next commit must try again."""
    global _seen_up_at
    _seen_up_at = -1e9


def hold_flag() -> None:
    """A worker on the job keeps the flag up (and its expiry away)."""
    _set(only_if_down=False)


def is_up() -> bool:
    """Whether a worker holds the flag (or a commit raised it); False while Redis is away."""
    client = redis.client()
    if client is not None:
        try:
            return bool(client.exists(KEY))
        except redis.Unavailable as error:
            redis.failed(error, "reading the deliveries flag")
            return False
    try:
        return time.time() - os.stat(_path()).st_mtime < FLAG_TTL_SECONDS
    except FileNotFoundError:
        return False


def take_flag() -> bool:
    """Take the flag down; True if it was up."""
    client = redis.client()
    if client is not None:
        try:
            return client.delete(KEY) == 1
        except redis.Unavailable as error:
            redis.failed(error, "taking the deliveries flag down")
            return False  # the sweeper looks again once Redis is back
    try:
        os.unlink(_path())
    except FileNotFoundError:
        return False
    return True


def _set(*, only_if_down: bool) -> bool:
    client = redis.client()
    if client is not None:
        if not redis.available():
            return True
        try:
            ttl = int(FLAG_TTL_SECONDS * 1000)
            return bool(client.set(KEY, 1, nx=only_if_down, px=ttl))
        except redis.Unavailable as error:
            redis.failed(error, "raising the deliveries flag")
            return True
    return _set_file(only_if_down)


def _path() -> str:
    return str(settings.DATA_DIR / "deliveries-due.flag")


def _set_file(only_if_down: bool) -> bool:
    """The file's age is the flag's expiry: one older than the TTL is down."""
    path = _path()
    if not only_if_down:
        try:
            os.utime(path)
            return False
        except FileNotFoundError:
            pass
    for _ in range(2):
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            return True
        except FileExistsError:
            try:
                if time.time() - os.stat(path).st_mtime < FLAG_TTL_SECONDS:
                    return False
                os.unlink(path)  # expired: its worker is gone
            except FileNotFoundError:
                pass
    return False
