"""Beat's scheduler, with a heartbeat.

Beat sends the sweeper, retries, purges and alerts their messages; when it dies nothing
says so. Its scheduler stamps a heartbeat row every HEARTBEAT_SECONDS from inside its own
loop, so the stamp proves beat itself is alive (a task would prove a worker is).
``CELERY_BEAT_SCHEDULER`` (config/settings.py) names this class, so the beat command line
stays Celery's own.
"""

from __future__ import annotations

import logging
import time

from celery.beat import PersistentScheduler

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 30.0


class HeartbeatScheduler(PersistentScheduler):
    last_beat = 0.0

    def tick(self, *args, **kwargs) -> float:
        self.beat_if_due()
        wait = super().tick(*args, **kwargs)
        return min(wait, HEARTBEAT_SECONDS)

    def beat_if_due(self) -> None:
        now = time.monotonic()
        if self.last_beat and now - self.last_beat < HEARTBEAT_SECONDS:
            return
        try:
            from operations import heartbeat

            heartbeat.stamp()
        except Exception as error:  # the database is away: beat goes on, readiness shows it
            logger.warning("beat heartbeat not written: %s", error)
            return
        finally:
            from django.db import close_old_connections

            close_old_connections()
        self.last_beat = now
