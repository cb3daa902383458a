"""Two workers recording batches that share integrations never deadlock (PostgreSQL)."""

import threading

import pytest
from django.db import connection

from core import clock
from integrations.delivery import claim, record
from integrations.delivery.transports import Outcome
from integrations.models import Delivery, DeliveryState
from integrations.services import integration_create
from tests.conftest import add_submission

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_batches_sharing_integrations_in_opposite_orders_both_record(
    user, form, settings, monkeypatch
):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    settings.CELERY_TASK_ALWAYS_EAGER = False
    first, second = (
        integration_create(owner=user, type="WEBHOOK", config={"url": "http://127.0.0.1:9/"})
        for _ in range(2)
    )
    submissions = [add_submission(form, {"n": str(n)}) for n in range(2)]
    claim.deliveries_claim_batch(10)  # both workers' batches hold their rows' claim
    deliveries = {
        (d.submission_id, d.integration_id): d
        for d in Delivery.objects.select_related("integration")
    }
    now = clock.now()

    def batch(order):
        return [
            (deliveries[(submission.pk, integration.pk)], Outcome(True, 200), now, 1)
            for submission, integration in zip(submissions, order, strict=True)
        ]

    # Each worker pauses after its first health update, while the other takes its own first.
    both_updated_one = threading.Barrier(2, timeout=10)
    real_update = record.update_integration

    def update_then_wait(integration, outcome, at, *args):
        real_update(integration, outcome, at, *args)
        if not getattr(local, "waited", False):
            local.waited = True
            both_updated_one.wait()

    local = threading.local()
    monkeypatch.setattr(record, "update_integration", update_then_wait)
    errors = []

    def worker(results):
        try:
            record.record_successes(results)
        except Exception as error:  # a deadlock surfaces here
            errors.append(error)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=worker, args=(batch([first, second]),)),
        threading.Thread(target=worker, args=(batch([second, first]),)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert set(Delivery.objects.values_list("state", flat=True)) == {DeliveryState.DELIVERED}
