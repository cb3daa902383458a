"""The access log never records the query string of a sensitive path: the OAuth callback's
``code`` and ``state`` (a grant anyone reading the logs could redeem), and the account pages
and endpoints whose links carry an address. uvicorn logs each request to ``uvicorn.access``
as ``(client, method, path?query, http version, status)``; a filter on that logger cuts the
query off before any handler (gunicorn's ``--access-logfile`` included) formats it."""

from __future__ import annotations

import logging

SENSITIVE_PATHS = ("/api/auth/", "/dashboard/verify", "/dashboard/reset-password")
LOGGER = "uvicorn.access"


class DropSensitiveQueries(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            path, _, query = args[2].partition("?")
            if query and path.startswith(SENSITIVE_PATHS):
                record.args = (*args[:2], path, *args[3:])
        return True


def install() -> None:
    """Put the filter on the access logger, once per process."""
    logger = logging.getLogger(LOGGER)
    if not any(isinstance(f, DropSensitiveQueries) for f in logger.filters):
        logger.addFilter(DropSensitiveQueries())
