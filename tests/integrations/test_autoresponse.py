"""Autoresponse on email integrations (contract, "Notifications and the delivery ledger")."""

import pytest

from integrations.models import AutoresponseSent, Integration
from integrations.services import integration_create
from tests.conftest import submit
from tests.fakes import Reply
from tests.integrations.conftest import EMAIL_CONFIG

REPLY = {"subject": "Thanks for writing", "text": "We read every message and answer within a day."}


@pytest.fixture
def answering(user, provider):
    return integration_create(owner=user, type="EMAIL",
                              config={**EMAIL_CONFIG, "autoresponse": REPLY})


def autoresponses(provider) -> list[dict]:
    return [r.json() for r in provider.requests if r.json()["to"] != ["owner@example.com"]]


def test_the_submitter_gets_the_owners_text_and_nothing_they_sent(public, form, answering,
                                                                  provider):
    submit(public, form, {"name": "<b>Mallory</b> says: buy now at evil.example",
                          "email": "visitor@example.com", "message": "Click evil.example"})

    [reply] = autoresponses(provider)
    assert reply == {
        "from": "Forms <forms@example.com>",
        "to": ["visitor@example.com"],
        "reply_to": "owner@example.com",
        "subject": REPLY["subject"],
        "text": REPLY["text"],
    }
    assert len(provider.requests) == 2  # and the owner's notification


def test_at_most_one_per_recipient_per_form_per_hour(public, form, user, answering, provider,
                                                     clock):
    from forms_app.services import form_create

    other_form = form_create(owner=user, name="Other")
    for n in range(3):
        submit(public, form, {"email": "visitor@example.com", "n": str(n)})
    submit(public, form, {"email": "VISITOR@example.com", "n": "case"})
    submit(public, form, {"email": "someone@example.com"})
    submit(public, other_form, {"email": "visitor@example.com"})
    assert [r["to"] for r in autoresponses(provider)] == [
        ["visitor@example.com"], ["someone@example.com"], ["visitor@example.com"]]

    clock.advance(hours=1, minutes=1)
    submit(public, form, {"email": "visitor@example.com", "n": "later"})

    assert len(autoresponses(provider)) == 4


def test_never_for_spam(owner_api, public, form, answering, provider):
    owner_api.patch(f"/api/v1/forms/{form.pk}", {"blockedWords": ["casino"]}, format="json")

    submit(public, form, {"email": "bot@example.com", "message": "casino bonus"})

    assert provider.requests == []


def test_never_for_a_test_send(owner_api, answering, provider):
    owner_api.post(f"/api/v1/integrations/{answering.pk}/test")

    assert autoresponses(provider) == []


def test_the_address_field_can_be_named(public, form, user, provider):
    integration_create(owner=user, type="EMAIL", config={
        **EMAIL_CONFIG, "autoresponse": REPLY, "autoresponseEmailField": "contact"})

    submit(public, form, {"email": "not-this@example.com", "contact": "this@example.com"})

    assert [r["to"] for r in autoresponses(provider)] == [["this@example.com"]]


@pytest.mark.parametrize("address", ["", "not an address", "a@b", ["x@example.com"],
                                     "x" * 250 + "@example.com"])
def test_no_autoresponse_without_a_valid_address(public, form, answering, provider, address):
    submit(public, form, {"email": address, "name": "Ada"})

    assert autoresponses(provider) == []


def test_a_failed_autoresponse_does_not_resend_the_notification(public, form, answering,
                                                                provider):
    provider.handler = lambda r: Reply(500 if r.json()["to"] != ["owner@example.com"] else 200)

    submit(public, form, {"email": "visitor@example.com"})

    assert Integration.objects.get().status == "healthy"
    assert len(provider.requests) == 2
    assert not AutoresponseSent.objects.exists()  # the next submission may try again


@pytest.mark.parametrize(
    "autoresponse",
    [{"subject": "Hi"}, {"subject": "", "text": "x"}, {"subject": "x", "text": "t" * 5001},
     {"subject": "x", "text": "y", "html": "<b>"}, "Thanks!", ["x"], {"subject": 1, "text": 2}],
)
def test_a_bad_autoresponse_is_a_400(owner_api, autoresponse):
    response = owner_api.post("/api/v1/integrations", {"type": "EMAIL", "config": {
        **EMAIL_CONFIG, "autoresponse": autoresponse}}, format="json")

    assert response.status_code == 400
    assert any(key.startswith("config.autoresponse") for key in response.json()["details"])


def test_null_turns_it_off(owner_api, public, form, answering, provider):
    response = owner_api.patch(f"/api/v1/integrations/{answering.pk}",
                               {"config": {"autoresponse": None}}, format="json")
    assert response.status_code == 200
    assert response.json()["config"]["autoresponse"] is None

    submit(public, form, {"email": "visitor@example.com"})

    assert autoresponses(provider) == []


def test_the_marks_are_purged_after_their_hour(public, form, answering, provider, clock):
    from io import StringIO

    from django.core.management import call_command

    submit(public, form, {"email": "visitor@example.com"})
    clock.advance(hours=2)

    call_command("purge", stdout=(out := StringIO()))

    assert "autoresponse_marks: 1 deleted" in out.getvalue()
    assert not AutoresponseSent.objects.exists()
