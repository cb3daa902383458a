"""A submission deleted (by its owner, in bulk, by an erasure) or a form deleted while
workers deliver: the delete answers as it always does, the delivery ends cleanly (the worker
records nothing for a row that is gone, and raises nothing), nothing is sent twice, and
PostgreSQL breaks no deadlock (contract, "Exactness under concurrency", "Deleting races
nothing into an error")."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from rest_framework.test import APIClient

from forms_app.models import Form
from forms_app.services import form_create
from integrations.delivery import attempt, claim, messages, record
from integrations.models import Delivery, DeliveryAttempt
from integrations.services import integration_create
from submissions.models import Submission
from tests.conftest import add_submission, bearer, make_user
from tests.fakes import FakeServer, Reply
from tests.forms.conftest import deadlocks, shared_database  # noqa: F401

ROUNDS = 5
PER_ROUND = 12

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def workers_only(settings, monkeypatch):
    """Deliveries wait for this test's workers, not for an eager task."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    monkeypatch.setattr(messages, "wake_workers", lambda *args, **kwargs: True)
    monkeypatch.setattr(record, "retry_later", lambda *args: None)


class Workers:
    """Two workers claiming and attempting batches of one (each recorded on its own, the
    moments a delete can meet) until stopped; what they raised."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.threads = [threading.Thread(target=self._work) for _ in range(2)]

    def _work(self) -> None:
        try:
            while not self.stop.is_set():
                batch = claim.deliveries_claim_batch(1)
                if batch:
                    attempt.deliveries_attempt(batch)
                else:
                    time.sleep(0.005)
        except Exception as error:  # reported by the test
            self.errors.append(error)
        finally:
            connection.close()

    def __enter__(self) -> Workers:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)


def _owner_client(owner) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=bearer(owner))
    return client


def _receiver_answers() -> Reply:
    time.sleep(random.uniform(0, 0.03))  # attempts end at every moment of a delete
    return Reply(200)


def _ids_sent_twice(receiver: FakeServer) -> list[str]:
    sent = Counter(request.headers["webhook-id"] for request in receiver.requests)
    return [message for message, times in sent.items() if times > 1]


def _race(deleting, caplog, deadlocks) -> FakeServer:  # noqa: F811
    """Run ``deleting(owner, form, client)`` against two workers, ROUNDS times, each round
    on a fresh form with PER_ROUND submissions whose deliveries are due; the receiver."""
    caplog.set_level(logging.ERROR)
    owner = make_user()
    client = _owner_client(owner)
    before = deadlocks()
    with FakeServer(lambda request: _receiver_answers()) as receiver:
        for n in range(2):  # two deliveries a submission, on one account-wide webhook each
            integration_create(owner=owner, type="WEBHOOK", config={"url": f"{receiver.url}/{n}"})
        with Workers() as workers:
            for _ in range(ROUNDS):
                form = form_create(owner=owner, name="Delivered", notify_owner=False)
                for n in range(PER_ROUND):
                    add_submission(form, {"email": f"ada{n % 3}@example.com", "n": str(n)})
                deleting(owner, form, client)
                assert not Submission.objects.filter(form_id=form.pk).exists()
            _wait_for_nothing_due()
        assert workers.errors == []
    assert [record.getMessage() for record in caplog.records] == []
    assert _ids_sent_twice(receiver) == []
    assert deadlocks() == before
    # What is left is only what the deletes announced (submission.deleted events), each
    # delivered, and no attempt of a delivery that went.
    assert not Delivery.objects.exclude(submission=None).exists()
    assert not Delivery.objects.exclude(state="delivered").exists()
    assert DeliveryAttempt.objects.count() == Delivery.objects.count()
    return receiver


def _wait_for_nothing_due() -> None:
    deadline = time.monotonic() + 20
    while Delivery.objects.exclude(state="delivered").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_submissions_deleted_one_by_one_while_delivered(shared_database, deadlocks, caplog):  # noqa: F811
    def deleting(owner, form: Form, client: APIClient) -> None:
        for submission_id in Submission.objects.filter(form=form).values_list("pk", flat=True):
            response = client.delete(f"/api/v1/forms/{form.pk}/submissions/{submission_id}")
            assert response.status_code == 204
            time.sleep(random.uniform(0, 0.01))

    _race(deleting, caplog, deadlocks)


def test_submissions_erased_by_address_while_delivered(shared_database, deadlocks, caplog):  # noqa: F811
    def deleting(owner, form: Form, client: APIClient) -> None:
        for n in range(3):
            time.sleep(random.uniform(0, 0.02))
            response = client.post("/api/v1/erasures", {"email": f"ada{n}@example.com"},
                                   format="json")
            assert response.status_code == 201
            assert response.json()["submissions"] == PER_ROUND // 3

    _race(deleting, caplog, deadlocks)


def test_a_form_deleted_while_its_submissions_are_delivered(shared_database, deadlocks, caplog):  # noqa: F811
    def deleting(owner, form: Form, client: APIClient) -> None:
        time.sleep(random.uniform(0, 0.05))
        assert client.delete(f"/api/v1/forms/{form.pk}").status_code == 204

    _race(deleting, caplog, deadlocks)


@pytest.mark.postgres
def test_an_owner_notification_counted_while_its_form_is_deleted_makes_no_deadlock(
    shared_database, deadlocks, monkeypatch  # noqa: F811
):
    """The owner's digest took its hour's row and then, at its commit, share-locks on the
    submission and the form (its notice's foreign keys), the other way round from a form's
    delete holding the form and then deleting the hour: PostgreSQL broke the cycle by
    failing one. It now holds the submission and the form first."""
    from integrations import on_forms
    from integrations.kinds.owner_email import digest
    from integrations.models import OwnerDigest

    owner = make_user()
    form = form_create(owner=owner, name="Busy hour", notify_owner=False)
    submission = add_submission(form, {"name": "Ada"})
    hour = digest.hour_of(submission.submitted_at)
    OwnerDigest.objects.create(form=form, hour=hour)  # earlier notices made the hour's row
    held, go = threading.Event(), threading.Event()
    real_hold = on_forms.deliveries_hold

    def hold_then_wait(chosen) -> None:
        real_hold(chosen)  # the form and its submissions are held by now
        held.set()
        go.wait(timeout=10)

    monkeypatch.setattr(on_forms, "deliveries_hold", hold_then_wait)
    before = deadlocks()

    def delete() -> int:
        try:
            return _owner_client(owner).delete(f"/api/v1/forms/{form.pk}").status_code
        finally:
            connection.close()

    def plan():
        try:
            return digest._plan(str(form.pk), str(submission.pk), hour)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        deleting = pool.submit(delete)
        assert held.wait(timeout=10)
        planning = pool.submit(plan)
        time.sleep(0.3)  # the plan waits on the delete's locks now
        go.set()
        assert deleting.result(timeout=30) == 204
        assert planning.result(timeout=30) == digest.Plan(alone=True, digest_id=None)

    assert not OwnerDigest.objects.filter(form_id=form.pk).exists()
    assert deadlocks() == before
