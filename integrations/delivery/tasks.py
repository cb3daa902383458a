"""Delivery's Celery tasks: they only carry ids and call a service, so running one twice is
harmless. Each keeps the name it was first registered under (``messages``): queued messages
and beat's schedule carry it."""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from integrations.delivery import alerts, messages, retry, worker

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


@shared_task(name=messages.DELIVER, acks_late=True, reject_on_worker_lost=True,
             ignore_result=True, **RETRY_ON_DATABASE_ERRORS)
def deliver(delivery_id: str) -> None:
    worker.delivery_run_in_lane(delivery_id)


@shared_task(name=messages.DELIVER_DUE, acks_late=True, reject_on_worker_lost=True,
             ignore_result=True, **RETRY_ON_DATABASE_ERRORS)
def deliver_due() -> int:
    return worker.deliveries_run_due()


@shared_task(name=messages.SWEEP, ignore_result=True)
def sweep_deliveries() -> int:
    return retry.delivery_sweep()


@shared_task(name=messages.SEND_FAILURE_ALERT, ignore_result=True, autoretry_for=(OSError,),
             retry_backoff=30, max_retries=5)
def send_failure_alert(integration_id: str, form_name: str, error: str, disabled: bool) -> None:
    alerts.send(integration_id, form_name, error, disabled)
