"""Telling workers that deliveries are due, without one broker message per submission.

A Celery message per submission cost the web process more than the rest of the submission, and
a worker per message more than the delivery. Instead a flag says "due deliveries may be
waiting":
- after a commit that wrote deliveries, ``raise_flag()``; only the caller that raised it
  publishes a ``deliver_due`` message;
- a worker runs due deliveries until none is left, then takes the flag down; if it was up, a
  commit happened meanwhile that it may not have seen, so it looks again.
So every committed delivery is either seen by a running worker, or its commit raised the flag
and published a message. If the broker loses that message, the sweeper takes the flag down and
publishes again. The flag lives in Redis, or without it in a file in DATA_DIR (the embedded
setup runs on one machine).
"""

from __future__ import annotations

import os

from django.conf import settings

from config import redis

KEY = "formflow:deliveries:due"


def _path() -> str:
    return str(settings.DATA_DIR / "deliveries-due.flag")


def raise_flag() -> bool:
    """Raise the flag; True if this call raised it (and must publish). While Redis is away,
    True: the publish then fails too (the broker is Redis), and the sweeper sends later."""
    client = redis.client()
    if client is not None:
        if not redis.available():
            return True
        try:
            return bool(client.set(KEY, 1, nx=True))
        except redis.Unavailable as error:
            redis.failed(error, "raising the deliveries flag")
            return True
    try:
        os.close(os.open(_path(), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    return True


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
