"""Celery tasks: they only carry ids and call a service, so running one twice is harmless."""

from celery import shared_task

from integrations import services


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver(delivery_id: str) -> None:
    services.delivery_run(delivery_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver_due() -> int:
    return services.deliveries_run_due()


@shared_task(ignore_result=True)
def sweep_deliveries() -> int:
    return services.delivery_sweep()
