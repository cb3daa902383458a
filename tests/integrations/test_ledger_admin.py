"""The delivery ledger in the admin: a record, shown but never changed or deleted there;
its rows go with what they belong to (contract, "Notifications and the delivery ledger")."""

import pytest

from integrations.models import Delivery, DeliveryAttempt, DeliveryState
from integrations.services import integration_create
from submissions.models import Submission
from tests.conftest import submit
from tests.fakes import Reply

DELIVERIES = "/admin/integrations/delivery/"
ATTEMPTS = "/admin/integrations/deliveryattempt/"


@pytest.fixture(autouse=True)
def one_attempt(settings):
    settings.DELIVERY_RETRY_DELAYS = []  # one attempt: a failure is final at once


@pytest.fixture
def failed(public, form, user, receiver) -> Delivery:
    integration_create(owner=user, type="WEBHOOK", config={"url": f"{receiver.url}/bad"})
    receiver.handler = lambda _r: Reply(500)
    submit(public, form)
    delivery = Delivery.objects.get()
    assert delivery.state == DeliveryState.FAILED and delivery.attempt_log.count() == 1
    return delivery


def delete_both_ways(admin_client, pages: str, pk) -> int:
    """The delete page's answer; the list's "Delete selected" is tried too."""
    admin_client.post(pages, {"action": "delete_selected", "_selected_action": [str(pk)],
                              "post": "yes"})
    return admin_client.post(f"{pages}{pk}/delete/", {"post": "yes"}).status_code


def test_a_delivery_is_not_deleted_in_the_admin(admin_client, failed):
    assert delete_both_ways(admin_client, DELIVERIES, failed.pk) == 403

    assert Delivery.objects.filter(pk=failed.pk).exists()
    assert "delete_selected" not in admin_client.get(DELIVERIES).content.decode()


def test_an_attempt_is_not_deleted_in_the_admin(admin_client, failed):
    attempt = DeliveryAttempt.objects.get()

    assert delete_both_ways(admin_client, ATTEMPTS, attempt.pk) == 403

    assert DeliveryAttempt.objects.filter(pk=attempt.pk).exists()
    assert "delete_selected" not in admin_client.get(ATTEMPTS).content.decode()


def test_a_delivery_is_not_changed_in_the_admin(admin_client, failed):
    """Shown; a post to its page is refused, so no stale state is written back."""
    page = f"{DELIVERIES}{failed.pk}/change/"
    assert admin_client.get(page).status_code == 200

    response = admin_client.post(page, {"state": "delivered", "attempts": "0"})

    assert response.status_code == 403
    failed.refresh_from_db()
    assert (failed.state, failed.attempts) == (DeliveryState.FAILED, 1)
    assert admin_client.get(f"{DELIVERIES}add/").status_code == 403


def test_failed_deliveries_are_still_retried_from_the_list(admin_client, failed):
    response = admin_client.post(DELIVERIES, {"action": "retry_failed",
                                              "_selected_action": [str(failed.pk)]},
                                 follow=True)

    assert "Re-queued 1 failed deliveries." in response.content.decode()


def test_a_submission_with_deliveries_is_still_deleted_in_the_admin(admin_client, failed):
    """The ledger's admin refuses a delete on its own pages only: the submission's delete
    page, which collects its deliveries, is not refused."""
    submission = Submission.objects.get()

    response = admin_client.post(f"/admin/submissions/submission/{submission.pk}/delete/",
                                 {"post": "yes"})

    assert response.status_code == 302
    assert not Submission.objects.exists()
    assert not Delivery.objects.exists() and not DeliveryAttempt.objects.exists()
