"""Celery tasks of submissions: they call a service, so running one twice is harmless."""

from celery import shared_task

from submissions import feed


@shared_task(ignore_result=True)
def place_in_feed() -> int:
    """Beat's tick of the feed's sequencer: rows are placed while nobody reads too."""
    return feed.catch_up()
