"""The service's notion of now, in one place so tests can move it."""

from datetime import datetime

from django.utils import timezone


def now() -> datetime:
    return timezone.now()
