"""One account cannot fan a submission out without bound, nor tie the server up with tests."""

from core.infra import wallclock
from integrations.clients import http
from integrations.models import Integration
from integrations.services import MAX_INTEGRATIONS, integration_create

NEW = "/api/v1/integrations"


def webhook_body(url="https://hooks.example.com/in"):
    return {"type": "WEBHOOK", "config": {"url": url}}


def test_an_account_has_at_most_twenty_integrations(owner_api, user):
    for _ in range(MAX_INTEGRATIONS - 1):
        integration_create(owner=user, type="WEBHOOK", config={"url": "https://h.example.com/"})
    assert owner_api.post(NEW, webhook_body(), format="json").status_code == 201

    refused = owner_api.post(NEW, webhook_body(), format="json")

    assert refused.status_code == 400
    assert "integrations" in refused.json()["details"]
    assert Integration.objects.filter(owner=user).count() == MAX_INTEGRATIONS


def test_ten_test_sends_a_minute_then_429(owner_api, hook):
    for _ in range(10):
        assert owner_api.post(f"{NEW}/{hook.pk}/test").status_code == 200

    refused = owner_api.post(f"{NEW}/{hook.pk}/test")

    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1


def test_a_test_send_waits_at_most_five_seconds(owner_api, hook, monkeypatch):
    budgets = []
    real_post = http.post

    def recording_post(*args, **kwargs):
        budgets.append(wallclock.budget(http.DEADLINE_SECONDS))
        return real_post(*args, **kwargs)

    monkeypatch.setattr(http, "post", recording_post)

    owner_api.post(f"{NEW}/{hook.pk}/test")

    assert budgets == [5.0]
    assert wallclock.budget(http.DEADLINE_SECONDS) == 10.0  # afterwards, deliveries keep 10 s
