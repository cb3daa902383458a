"""Each worker's heartbeat, stamped from the worker's own timer (a Celery bootstep that
config/celery.py adds), so it proves the worker process is alive even while no task comes:
a task would prove only that beat and the broker still send work. /status's ``workers`` and
formflow_worker_last_seen_timestamp_seconds read it."""

from __future__ import annotations

import logging
from typing import Any

from celery import bootsteps

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 30.0


def stamp(hostname: str) -> None:
    from django.db import connection

    from operations import heartbeat

    try:
        heartbeat.stamp_worker(hostname)
    except Exception as error:  # the database is away: the worker goes on, /status shows it
        logger.warning("worker heartbeat not written: %s", error)
    finally:
        # The timer runs in the worker's main process, whose pool children are forked from
        # it: no connection is kept open there to be inherited.
        connection.close()


class WorkerHeartbeat(bootsteps.StartStopStep):
    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        super().__init__(worker, **kwargs)
        self.timer_entry: Any = None

    def start(self, worker: Any) -> None:
        stamp(worker.hostname)
        self.timer_entry = worker.timer.call_repeatedly(
            HEARTBEAT_SECONDS, stamp, (worker.hostname,))

    def stop(self, worker: Any) -> None:
        if self.timer_entry is not None:
            self.timer_entry.cancel()
            self.timer_entry = None
