"""submission.deleted and submission.spam (contract, "Event subscriptions and erasure"): who
receives them, what they carry, and when they are sent."""

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from standardwebhooks.webhooks import Webhook

from integrations.hooks.services import hook_create
from integrations.models import Delivery, DeliveryAttempt
from submissions.models import Submission
from tests.conftest import PASSWORD, submit
from tests.fakes import Reply

CREATED, DELETED, SPAM = "submission.created", "submission.deleted", "submission.spam"


def headers_of(request):
    return {name.lower(): value for name, value in request.headers.items()}


def received(receiver, path, event_type=None):
    """The events a subscriber at ``path`` was sent, each checked against its secret."""
    return [
        request for request in receiver.requests
        if request.path == path and (event_type is None or request.json()["type"] == event_type)
    ]


@pytest.fixture
def subscribers(user, form, receiver):
    """Four subscribers of the form, each asking for other events."""
    def subscribe(path, events):
        return hook_create(owner=user, api_key=None, url=f"{receiver.url}{path}",
                           form_id=str(form.pk), events=events)

    return {
        "/deleted": subscribe("/deleted", [DELETED]),
        "/created": subscribe("/created", [CREATED]),
        "/both": subscribe("/both", [CREATED, DELETED]),
        "/spam": subscribe("/spam", [SPAM]),
    }


def assert_one_signed_deletion(receiver, subscribers, form, submission_id):
    """One verified submission.deleted at each subscriber that asked, none at the others."""
    assert_signed_deletions(receiver, subscribers, form, [submission_id])


def assert_signed_deletions(receiver, subscribers, form, submission_ids):
    """One verified submission.deleted per submission at each subscriber that asked, none at
    the others."""
    for path, hook in subscribers.items():
        deletions = received(receiver, path, DELETED)
        if DELETED not in hook.event_list:
            assert deletions == []
            continue
        assert len(deletions) == len(submission_ids), path
        for request in deletions:
            Webhook(hook.secrets["signingSecret"]).verify(request.body, headers_of(request))
            event = request.json()
            assert event == {
                "type": DELETED,
                "timestamp": event["timestamp"],
                "data": {"id": event["data"]["id"], "formId": str(form.pk),
                         "formSlug": form.slug, "formName": form.name},
            }
            assert event["timestamp"].endswith("Z")
        ids = sorted(request.json()["data"]["id"] for request in deletions)
        assert ids == sorted(str(pk) for pk in submission_ids), path


def stored(public, form, data=None):
    submit(public, form, data or {"name": "Ada", "email": "ada@example.com"})
    return Submission.objects.latest("submitted_at")


def test_created_goes_only_to_those_that_asked(public, form, subscribers, receiver):
    submit(public, form, {"name": "Ada"})

    paths = sorted(request.path for request in receiver.requests)
    assert paths == ["/both", "/created"]
    assert {request.json()["type"] for request in receiver.requests} == {CREATED}


def test_deleting_through_the_api_announces_one_signed_deletion(
    public, owner_api, form, subscribers, receiver
):
    submission = stored(public, form)

    response = owner_api.delete(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}")

    assert response.status_code == 204
    assert_one_signed_deletion(receiver, subscribers, form, submission.pk)


def test_deleting_from_the_dashboard_announces_one_deletion(
    public, form, subscribers, receiver, user, client
):
    submission = stored(public, form)
    client.post("/dashboard/login", {"email": user.email, "password": PASSWORD})

    response = client.post(f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/delete")

    assert response.status_code == 302
    assert_one_signed_deletion(receiver, subscribers, form, submission.pk)


def aged(submission, days: int) -> None:
    """Move a submission back in time (the clock stays real: signatures are checked against
    the real time)."""
    Submission.objects.filter(pk=submission.pk).update(
        submitted_at=submission.submitted_at - timedelta(days=days))


def test_a_retention_purge_announces_one_deletion(
    public, owner_api, form, subscribers, receiver
):
    owner_api.patch(f"/api/v1/forms/{form.pk}", {"retentionDays": 1}, format="json")
    submission = stored(public, form)
    aged(submission, days=2)

    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        call_command("purge", stdout=open("/dev/null", "w"))  # noqa: SIM115

    assert not Submission.objects.exists()
    assert_one_signed_deletion(receiver, subscribers, form, submission.pk)


def test_deletions_carry_no_field_values_and_keep_no_submission(
    public, owner_api, form, subscribers, receiver
):
    submission = stored(public, form, {"name": "Grace", "secret": "s3cr3t-value"})

    owner_api.delete(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}")

    for request in received(receiver, "/deleted"):
        assert b"s3cr3t-value" not in request.body and b"Grace" not in request.body
    deletion = Delivery.objects.get(event_type=DELETED, integration=subscribers["/deleted"])
    assert deletion.submission_id is None
    assert deletion.state == "delivered"


def test_spam_held_on_arrival_and_purged_is_never_announced(
    public, owner_api, form, subscribers, receiver, clock
):
    owner_api.patch(f"/api/v1/forms/{form.pk}", {"blockedWords": ["casino"]}, format="json")
    submit(public, form, {"message": "casino night"})
    assert Submission.objects.get().status == "spam"
    clock.advance(days=31)

    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        call_command("purge", stdout=open("/dev/null", "w"))  # noqa: SIM115

    assert not Submission.objects.exists()
    assert receiver.requests == []


def test_the_spam_purge_announces_what_had_been_delivered(
    public, owner_api, form, subscribers, receiver
):
    submission = stored(public, form)
    owner_api.post(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}/spam")
    aged(submission, days=31)

    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        call_command("purge", stdout=open("/dev/null", "w"))  # noqa: SIM115

    assert not Submission.objects.exists()
    assert_one_signed_deletion(receiver, subscribers, form, submission.pk)


def test_marking_a_delivered_submission_spam_announces_it(
    public, owner_api, form, subscribers, receiver
):
    submission = stored(public, form)

    response = owner_api.post(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}/spam")

    assert response.status_code == 200
    spam = received(receiver, "/spam")
    assert len(spam) == 1
    hook = subscribers["/spam"]
    Webhook(hook.secrets["signingSecret"]).verify(spam[0].body, headers_of(spam[0]))
    assert spam[0].json()["data"] == {"id": str(submission.pk), "formId": str(form.pk),
                                      "formSlug": form.slug, "formName": form.name}
    assert [r.json()["type"] for r in receiver.requests if r.path != "/spam"] == [CREATED] * 2
    # The event is in the submission's ledger.
    ledger = owner_api.get(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}/deliveries")
    assert sorted(row["state"] for row in ledger.json()) == ["delivered"] * 3


def test_marking_spam_before_anything_went_out_announces_nothing(
    public, owner_api, form, subscribers, receiver
):
    receiver.handler = lambda _request: Reply(503)  # every created delivery waits to retry
    submission = stored(public, form)
    receiver.requests.clear()
    receiver.handler = lambda _request: Reply(200)

    owner_api.post(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}/spam")

    assert received(receiver, "/spam") == []
    assert not Delivery.objects.filter(event_type=SPAM).exists()


def test_a_spam_mark_of_a_held_submission_announces_nothing(
    public, owner_api, form, subscribers, receiver
):
    owner_api.patch(f"/api/v1/forms/{form.pk}", {"blockedWords": ["casino"]}, format="json")
    submit(public, form, {"message": "casino night"})
    held = Submission.objects.get()

    owner_api.post(f"/api/v1/forms/{form.pk}/submissions/{held.pk}/spam")

    assert receiver.requests == []


def test_a_webhook_integration_takes_events(owner_api, public, form, receiver):
    response = owner_api.post("/api/v1/integrations", {
        "type": "WEBHOOK", "config": {"url": f"{receiver.url}/wh", "events": [DELETED]},
    }, format="json")
    assert response.status_code == 201
    assert response.json()["config"]["events"] == [DELETED]
    submission = stored(public, form)
    assert receiver.requests == []  # it did not ask for submission.created

    owner_api.delete(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}")

    assert [request.json()["type"] for request in receiver.requests] == [DELETED]
    patched = owner_api.patch(f"/api/v1/integrations/{response.json()['_id']}",
                              {"config": {"events": [CREATED, SPAM]}}, format="json")
    assert patched.json()["config"]["events"] == [CREATED, SPAM]
    stored(public, form, {"name": "Grace"})
    assert [request.json()["type"] for request in receiver.requests] == [DELETED, CREATED]


def test_a_disabled_subscriber_hears_nothing(public, owner_api, form, subscribers, receiver):
    from integrations.models import Integration

    submission = stored(public, form)
    receiver.requests.clear()
    Integration.objects.filter(hook=True).update(enabled=False)

    owner_api.delete(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}")

    assert receiver.requests == []


def test_an_erasure_announces_each_deletion_and_leaves_no_payload(
    public, owner_api, form, subscribers, receiver
):
    first = stored(public, form, {"email": "Ada@Example.com"})
    second = stored(public, form, {"note": "write to ada@example.com please"})
    kept = stored(public, form, {"email": "linda@example.com"})
    receiver.requests.clear()

    response = owner_api.post("/api/v1/erasures", {"email": "ada@example.com"}, format="json")

    assert response.status_code == 201
    assert response.json()["submissions"] == 2
    assert_signed_deletions(receiver, subscribers, form, [first.pk, second.pk])
    assert received(receiver, "/created") == received(receiver, "/spam") == []
    # What the ledger keeps holds nothing of the erased submissions' data.
    ledger = json.dumps([
        [str(value) for value in row]
        for row in Delivery.objects.values_list("submission_id", "payload", "last_error")
    ]) + json.dumps(list(DeliveryAttempt.objects.values_list("error", flat=True)))
    assert "ada@example.com" not in ledger.lower()
    assert not Delivery.objects.filter(submission_id__in=[first.pk, second.pk]).exists()
    assert Delivery.objects.filter(submission_id=kept.pk).exists()


def test_an_erasure_announces_spam_held_on_arrival_too(
    public, owner_api, form, subscribers, receiver
):
    """The contract has an erasure emit submission.deleted for each submission it removes,
    so one the filter held on arrival (never delivered) is announced as well."""
    owner_api.patch(f"/api/v1/forms/{form.pk}", {"blockedWords": ["casino"]}, format="json")
    submit(public, form, {"email": "ada@example.com", "message": "casino night"})
    held = Submission.objects.get()
    assert held.status == "spam"
    delivered = stored(public, form, {"email": "ada@example.com"})
    receiver.requests.clear()

    response = owner_api.post("/api/v1/erasures", {"email": "ada@example.com"}, format="json")

    assert response.json()["submissions"] == 2
    assert_signed_deletions(receiver, subscribers, form, [held.pk, delivered.pk])
