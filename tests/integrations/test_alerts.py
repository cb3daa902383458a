"""Failure alerts to the account address (contract, "Notifications and the delivery ledger")."""

import pytest
from django.core import mail

from integrations.models import Integration
from integrations.services import integration_create
from tests.conftest import submit
from tests.fakes import Reply


@pytest.fixture(autouse=True)
def failing(receiver, settings):
    settings.DELIVERY_RETRY_DELAYS = []  # one attempt: a failure is final at once
    receiver.handler = lambda _request: Reply(500)


def alerts() -> list:
    return [m for m in mail.outbox if "integration for" in m.subject]


def test_a_delivery_that_used_all_its_attempts_alerts_the_owner(public, form, user, hook):
    submit(public, form)

    [alert] = alerts()
    assert alert.to == [user.email]
    assert alert.subject == "FormFlow: your Webhook integration for Contact failed"
    assert "Last error: HTTP 500" in alert.body
    assert "/dashboard/integrations" in alert.body


def test_at_most_one_alert_per_integration_per_day(public, form, user, hook, clock):
    submit(public, form, {"n": "1"})
    submit(public, form, {"n": "2"})
    clock.advance(hours=23)
    submit(public, form, {"n": "3"})
    assert len(alerts()) == 1

    clock.advance(hours=1, minutes=1)
    submit(public, form, {"n": "4"})

    assert len(alerts()) == 2


def test_each_integration_has_its_own_alert(public, form, user, hook, receiver):
    integration_create(owner=user, type="WEBHOOK", config={"url": f"{receiver.url}/other"})

    submit(public, form)

    assert len(alerts()) == 2


def test_a_destination_that_is_gone_alerts_that_it_was_turned_off(public, form, hook,
                                                                 receiver):
    receiver.handler = lambda _r: Reply(410)

    submit(public, form)

    assert Integration.objects.get().enabled is False
    [alert] = alerts()
    assert "turned off" in alert.body
    assert "HTTP 410" in alert.body


def test_a_failure_that_will_be_retried_alerts_no_one(public, form, hook, settings):
    settings.DELIVERY_RETRY_DELAYS = [300]

    submit(public, form)

    assert alerts() == []


def test_a_failed_test_send_alerts_no_one(owner_api, hook):
    response = owner_api.post(f"/api/v1/integrations/{hook.pk}/test")

    assert response.json()["success"] is False
    assert alerts() == []


def test_an_alert_carries_no_secret(public, form, user, receiver, owner_api):
    owner_api.post("/api/v1/integrations", {"type": "SLACK", "config": {
        "webhookUrl": f"{receiver.url}/services/T/B/very-secret"}}, format="json")

    submit(public, form)

    [alert] = alerts()
    assert "very-secret" not in alert.body
    assert alert.subject == "FormFlow: your Slack integration for Contact failed"
