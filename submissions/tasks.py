"""Celery tasks of submissions: they call a service, so running one twice is harmless."""

from celery import shared_task

from submissions import services


@shared_task(ignore_result=True)
def purge_spam() -> int:
    return services.spam_purge()
