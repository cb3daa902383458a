"""The access log never records a query string, only the path. Queries carry credentials and
personal data on too many paths to list them (the OAuth callback's ``code`` and ``state``, a
signed download link's ``sig``, an erasure's ``email``, search terms), and a list misses the
next one. uvicorn logs each request to ``uvicorn.access`` as ``(client, method, path?query,
http version, status)``; a filter on that logger cuts the query off before any handler
(gunicorn's ``--access-logfile`` included) formats it.

One path carries a credential itself: the one-time link mailed beside a code
(``/dashboard/confirm/<token>``), whose token is cut off too."""

from __future__ import annotations

import logging
import re

LOGGER = "uvicorn.access"
LINK_TOKEN = re.compile(r"^(/dashboard/confirm/)[^/]+")


class DropQueries(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            path = LINK_TOKEN.sub(r"\1<token>", args[2].partition("?")[0])
            if path != args[2]:
                record.args = (*args[:2], path, *args[3:])
        return True


def install() -> None:
    """Put the filter on the access logger, once per process."""
    logger = logging.getLogger(LOGGER)
    if not any(isinstance(f, DropQueries) for f in logger.filters):
        logger.addFilter(DropQueries())
