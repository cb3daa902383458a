"""Beat's scheduler: one schedule across every machine, and a heartbeat.

Beat sends the sweeper, the feed's sequencer, purges and digests their messages. Two beats
(one per machine, say) would send each of them twice, so the schedule is a lease: the beat
that holds beat's heartbeat row sends, every other beat stands by and takes the row over once
it has not been stamped for LEASE (its holder died or stopped). The holder stamps the row
before each tick that may send, so the stamp proves beat itself is alive and scheduling (a
task would prove a worker is), and /status reads its age. ``CELERY_BEAT_SCHEDULER``
(config/settings.py) names this class, so the beat command line stays Celery's own.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from datetime import timedelta

from celery.beat import PersistentScheduler

logger = logging.getLogger(__name__)

# A beat that has not stamped for this long has lost the schedule to the next that asks.
LEASE = timedelta(seconds=15)
# How often a beat standing by asks for the schedule.
STANDBY_SECONDS = 3.0
# The longest a holder waits between stamps (its schedule's shortest interval is shorter).
HOLDER_SECONDS = 5.0


class HeartbeatScheduler(PersistentScheduler):
    holder = ""
    # Until when (this process's monotonic clock) the schedule is surely this beat's: its
    # lease counted from before its last stamp, so it ends before any other beat may take it.
    held_until = 0.0
    running: bool | None = None  # whether this beat ran the schedule at its last ask

    def tick(self, *args, **kwargs) -> float:
        if not self.holds_schedule():
            return STANDBY_SECONDS
        wait = super().tick(*args, **kwargs)
        return min(wait, HOLDER_SECONDS)

    def holds_schedule(self) -> bool:
        """Stamp the heartbeat as this beat's if the schedule is, or is free: whether this
        beat may send now. While the database is away a holder goes on until its lease ends
        (no other beat can take the schedule before), then stands by."""
        if not self.holder:
            self.holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        asked = time.monotonic()
        try:
            from operations import heartbeat

            held = heartbeat.hold(self.holder, LEASE)
        except Exception as error:  # the database is away; /status shows beat late
            logger.warning("beat heartbeat not written: %s", error)
            return asked < self.held_until
        finally:
            from django.db import close_old_connections

            close_old_connections()
        if held is not self.running:
            logger.info("This beat %s", "runs the schedule" if held
                        else "stands by: another beat runs the schedule")
        self.running = held
        self.held_until = asked + LEASE.total_seconds() if held else 0.0
        return held
