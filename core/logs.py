"""Log records as one JSON object a line (LOG_FORMAT=json), for a log collector to parse: the
formatter Django's LOGGING names, which Celery (config/celery.py) and gunicorn (edge/logs.py)
use too."""

from __future__ import annotations

import json
import logging
import os
import re
from datetime import UTC, datetime

# The paths of the links mailed beside a code and with a team invitation carry a credential
# (dashboard/views/confirm.py, dashboard/views/invitations.py).
LINK_TOKEN = re.compile(r"(/dashboard/(?:confirm|invitations)/)[^/?#\s]+")


def wanted() -> bool:
    """Whether LOG_FORMAT asks for JSON; read from the environment, for the processes (the
    gunicorn master) that log before Django's settings are loaded."""
    return os.environ.get("LOG_FORMAT", "plain").strip().lower() == "json"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        duration = getattr(record, "duration_seconds", None)  # an access line's (edge/)
        if duration is not None:
            entry["durationSeconds"] = duration
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class CutLinkTokens(logging.Filter):
    """Cuts a mailed link's token from a record's arguments, on the loggers that name a
    request's path: Django's refusals (a CSRF failure, "Forbidden (...): <path>") and its
    errors, which would otherwise keep a live token in the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(LINK_TOKEN.sub(r"\1<token>", arg) if isinstance(arg, str)
                                else arg for arg in record.args)
        if isinstance(record.msg, str):
            record.msg = LINK_TOKEN.sub(r"\1<token>", record.msg)
        return True
