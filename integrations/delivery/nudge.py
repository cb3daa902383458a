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
without it in a file in DATA_DIR (integrations/delivery/backends.py).
"""

from __future__ import annotations

import time

from django.conf import settings

from integrations.delivery import backends

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
    raised = backends.flag_store().set(only_if_down=True, ttl=FLAG_TTL_SECONDS)
    _seen_up_at = now
    return raised


def forget() -> None:
    """The message this process meant to send did not go: the next commit must try again."""
    global _seen_up_at
    _seen_up_at = -1e9


def hold_flag() -> None:
    """A worker on the job keeps the flag up (and its expiry away)."""
    backends.flag_store().set(only_if_down=False, ttl=FLAG_TTL_SECONDS)


def is_up() -> bool:
    """Whether a worker holds the flag (or a commit raised it); False while Redis is away."""
    return backends.flag_store().is_up(FLAG_TTL_SECONDS)


def take_flag() -> bool:
    """Take the flag down; True if it was up."""
    return backends.flag_store().take()
