"""Celery tasks of submissions: they call a service, so running one twice is harmless."""

from celery import shared_task

from submissions import feed, services


@shared_task(ignore_result=True)
def purge_spam() -> int:
    """Messages queued by an earlier version of the service still run; beat sends purge."""
    return services.spam_purge()


@shared_task(ignore_result=True)
def place_in_feed() -> int:
    """Beat's tick of the feed's sequencer: rows are placed while nobody reads too."""
    return feed.catch_up()
