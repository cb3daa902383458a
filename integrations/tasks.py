"""Celery tasks: they only carry ids and call a service, so running one twice is harmless."""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from integrations import outbox

# A database that goes away mid-task leaves the rows as they were: pending, and marked as having
# a message on its way, which the sweeper trusts for REQUEUE_AFTER (5 minutes). So the task
# tries again every few seconds instead, and delivery resumes within seconds of the database's
# return. The sweeper still covers a retry that is lost.
RETRY_ON_DATABASE_ERRORS = {
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 1,
    "retry_backoff_max": 5,
    "retry_jitter": False,
    "max_retries": 60,
}


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True,
             **RETRY_ON_DATABASE_ERRORS)
def deliver(delivery_id: str) -> None:
    outbox.delivery_run(delivery_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True,
             **RETRY_ON_DATABASE_ERRORS)
def deliver_due() -> int:
    return outbox.deliveries_run_due()


@shared_task(ignore_result=True)
def sweep_deliveries() -> int:
    return outbox.delivery_sweep()


@shared_task(ignore_result=True, autoretry_for=(OSError,), retry_backoff=30, max_retries=5)
def send_failure_alert(integration_id: str, form_name: str, error: str, disabled: bool) -> None:
    from accounts import mailer
    from integrations import alerts
    from integrations.models import Integration

    integration = Integration.objects.select_related("owner").filter(pk=integration_id).first()
    if integration is None:
        return  # deleted meanwhile: nobody to tell about it
    mailer.send(**alerts.message(integration, form_name, error, disabled))
