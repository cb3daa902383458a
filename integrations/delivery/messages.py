"""The Celery messages delivery sends, by the names its tasks are registered under.

The tasks (integrations/delivery/tasks.py) run the modules that send these messages, so the
modules name a task instead of importing it: no import runs in a circle. The names are those
queued messages carry and beat's schedule uses; they never change.
"""

from __future__ import annotations

from celery import current_app

from core.infra import broker

DELIVER = "integrations.tasks.deliver"
DELIVER_DUE = "integrations.tasks.deliver_due"
SWEEP = "integrations.tasks.sweep_deliveries"
SEND_FAILURE_ALERT = "integrations.tasks.send_failure_alert"


def wake_workers(what: str, *, always_try: bool = False) -> bool:
    """One deliver_due message; False if the broker is away (the sweeper then sends)."""
    task = current_app.tasks[DELIVER_DUE]
    return broker.publish(lambda: task.apply_async(retry=False), what, always_try=always_try)


def deliver_later(delivery_id, countdown: float) -> bool:
    """One delivery's next attempt after a short wait; False if the broker is away."""
    task = current_app.tasks[DELIVER]

    def send() -> None:
        task.apply_async((str(delivery_id),), countdown=countdown, retry=False)

    return broker.publish(send, f"delivery {delivery_id}")


def alert_owner(integration_id, form_name: str, error: str, disabled: bool) -> None:
    current_app.tasks[SEND_FAILURE_ALERT].delay(str(integration_id), form_name, error, disabled)
