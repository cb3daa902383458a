"""Log records as one JSON object a line (LOG_FORMAT=json), for a log collector to parse: the
formatter Django's LOGGING names, which Celery (config/celery.py) and gunicorn (edge/logs.py)
use too."""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime


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
