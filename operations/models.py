from django.db import models


class Heartbeat(models.Model):
    """When a process that has no request to answer last said it was alive (beat). Kept in
    the database, the one store every process shares on every setup (the embedded cache is
    one process's memory), and stamped with the database's clock, so the web's reading of
    its age does not depend on two machines' clocks agreeing."""

    name = models.CharField(max_length=40, primary_key=True)
    at = models.DateTimeField()
    # Beat's row only: which beat holds the schedule (operations/beat.py); "" for the others.
    holder = models.CharField(max_length=100, blank=True, default="")

    def __str__(self) -> str:
        return f"{self.name} at {self.at}"
