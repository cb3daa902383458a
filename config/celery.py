from celery import Celery, signals
from django import db

from config.boot import load_settings

load_settings()
app = Celery("formflow")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.task_prerun.connect
@signals.task_postrun.connect
def _close_old_connections(sender=None, **_kwargs) -> None:
    """Between tasks, what Django does between requests: drop only broken or expired
    connections, so a worker reuses one connection for many deliveries. A task run eagerly
    belongs to its caller's connection and transaction, which are left alone."""
    if sender is not None and getattr(sender.request, "is_eager", False):
        return
    db.close_old_connections()
