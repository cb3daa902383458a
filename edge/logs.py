"""gunicorn's logger, ``edge.logs.Logger``, which the Procfile's web line names.

gunicorn formats its own lines (the master's, and each worker's error and access logs, which
uvicorn's loggers are pointed at) with handlers of its own, outside Django's LOGGING. With
LOG_FORMAT=json they write one JSON object a line like every other process; otherwise
gunicorn's formats are kept.
"""

from __future__ import annotations

from gunicorn import glogging

from core import logs


class Logger(glogging.Logger):
    def setup(self, cfg) -> None:
        super().setup(cfg)
        if not logs.wanted():
            return
        formatter = logs.JsonFormatter()
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.setFormatter(formatter)
