"""The access log never records a query string, only the path. Queries carry credentials and
personal data on too many paths to list them (the OAuth callback's ``code`` and ``state``, a
signed download link's ``sig``, an erasure's ``email``, search terms), and a list misses the
next one. uvicorn logs each request to ``uvicorn.access`` as ``(client, method, path?query,
http version, status)``; a filter on that logger cuts the query off before any handler
(gunicorn's ``--access-logfile`` included) formats it.

Each line also ends with the request's duration, from its first byte to its answer's start
(``... 200 0.012s``; in JSON lines the field ``durationSeconds`` too). The edge protocol sets
when the request began (``STARTED``) before uvicorn makes the request's task, which copies it
(edge/protocol.py), so the line uvicorn logs from that task knows it.

Two paths carry a credential themselves: the one-time link mailed beside a code
(``/dashboard/confirm/<token>``) and a team's invitation (``/dashboard/invitations/<token>``),
whose tokens are cut off too."""

from __future__ import annotations

import logging
import re
import time
from contextvars import ContextVar

LOGGER = "uvicorn.access"
STARTED: ContextVar[float | None] = ContextVar("request_started", default=None)
LINK_TOKEN = re.compile(r"^(/dashboard/(?:confirm|invitations)/)[^/]+")


class DropQueries(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            path = LINK_TOKEN.sub(r"\1<token>", args[2].partition("?")[0])
            if path != args[2]:
                record.args = (*args[:2], path, *args[3:])
        return True


class AddDuration(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        started = STARTED.get()
        if started is not None and isinstance(record.args, tuple) and not hasattr(
                record, "duration_seconds"):
            seconds = time.monotonic() - started
            record.msg = f"{record.msg} %.3fs"
            record.args = (*record.args, seconds)
            record.duration_seconds = round(seconds, 6)
        return True


def install() -> None:
    """Put the filters on the access logger, once per process."""
    logger = logging.getLogger(LOGGER)
    for kind in (DropQueries, AddDuration):
        if not any(isinstance(f, kind) for f in logger.filters):
            logger.addFilter(kind())
