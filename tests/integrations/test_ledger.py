"""The delivery ledger and its retry (contract, "Notifications and the delivery ledger")."""

import pytest

from integrations.models import Delivery, Integration
from integrations.services import integration_create
from submissions.models import Submission
from tests.conftest import submit
from tests.fakes import Reply


@pytest.fixture(autouse=True)
def one_attempt(settings):
    settings.DELIVERY_RETRY_DELAYS = []  # one attempt: a failure is final at once


@pytest.fixture
def two_hooks(user, receiver):
    good = integration_create(owner=user, type="WEBHOOK", config={"url": f"{receiver.url}/ok"})
    bad = integration_create(owner=user, type="WEBHOOK", config={"url": f"{receiver.url}/bad"})
    receiver.handler = lambda r: Reply(500 if r.path == "/bad" else 200)
    return good, bad


def ledger(api, form, submission):
    return api.get(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}/deliveries")


def test_the_ledger_lists_each_integration_with_its_state(owner_api, public, form, two_hooks):
    good, bad = two_hooks
    submit(public, form)
    submission = Submission.objects.get()

    response = ledger(owner_api, form, submission)

    assert response.status_code == 200
    rows = {row["integrationId"]: row for row in response.json()}
    assert set(rows) == {str(good.pk), str(bad.pk)}
    assert rows[str(good.pk)]["state"] == "delivered"
    assert rows[str(bad.pk)]["state"] == "failed"
    assert rows[str(bad.pk)]["lastError"] == "HTTP 500"
    for row in rows.values():
        assert set(row) == {"_id", "integrationId", "type", "state", "attempts", "lastError",
                            "lastAttemptAt", "nextAttemptAt"}
        assert row["type"] == "WEBHOOK"
        assert row["attempts"] == 1
        assert row["lastAttemptAt"] is not None
        assert row["nextAttemptAt"] is None


def test_a_pending_delivery_says_when_it_is_tried_next(owner_api, public, form, user, settings,
                                                       receiver):
    settings.DELIVERY_RETRY_DELAYS = [300]
    integration_create(owner=user, type="WEBHOOK", config={"url": f"{receiver.url}/bad"})
    receiver.handler = lambda _r: Reply(503)
    submit(public, form)

    row = ledger(owner_api, form, Submission.objects.get()).json()[0]

    assert row["state"] == "pending"
    assert row["nextAttemptAt"] is not None
    assert row["lastError"] == "HTTP 503"


def test_another_owners_ledger_and_delivery_are_404(other_api, public, form, two_hooks):
    submit(public, form)
    submission = Submission.objects.get()
    failed = Delivery.objects.get(state="failed")

    assert ledger(other_api, form, submission).status_code == 404
    response = other_api.post(f"/api/v1/deliveries/{failed.pk}/retry")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    assert Delivery.objects.get(pk=failed.pk).state == "failed"


@pytest.mark.parametrize("delivery_id", ["nope", "00000000-0000-0000-0000-000000000000"])
def test_an_unknown_delivery_is_404(owner_api, delivery_id):
    assert owner_api.post(f"/api/v1/deliveries/{delivery_id}/retry").status_code == 404


def test_retrying_a_failed_delivery_ends_delivered(owner_api, public, form, two_hooks, receiver):
    submit(public, form)
    failed = Delivery.objects.get(state="failed")
    receiver.handler = lambda _r: Reply(200)

    response = owner_api.post(f"/api/v1/deliveries/{failed.pk}/retry")

    assert response.status_code == 202
    assert response.json()["_id"] == str(failed.pk)
    failed.refresh_from_db()
    assert failed.state == "delivered"
    assert failed.attempts == 1  # a fresh set of attempts
    assert [r.path for r in receiver.requests].count("/bad") == 2


def test_retrying_a_delivered_one_is_409(owner_api, public, form, two_hooks, receiver):
    submit(public, form)
    delivered = Delivery.objects.get(state="delivered")

    response = owner_api.post(f"/api/v1/deliveries/{delivered.pk}/retry")

    assert response.status_code == 409
    assert response.json()["error"] == "not_retryable"
    assert [r.path for r in receiver.requests].count("/ok") == 1


def test_retrying_for_a_disabled_integration_is_409(owner_api, public, form, two_hooks):
    submit(public, form)
    failed = Delivery.objects.get(state="failed")
    Integration.objects.filter(pk=failed.integration_id).update(enabled=False)

    assert owner_api.post(f"/api/v1/deliveries/{failed.pk}/retry").status_code == 409
    assert Delivery.objects.get(pk=failed.pk).state == "failed"


def test_the_ledger_needs_a_login(api, public, form, two_hooks):
    submit(public, form)
    failed = Delivery.objects.get(state="failed")

    assert ledger(api, form, Submission.objects.get()).status_code == 401
    assert api.post(f"/api/v1/deliveries/{failed.pk}/retry").status_code == 401
