"""REST hook subscriptions, /api/v1/hooks (contract, "Event subscriptions and erasure")."""

import re

import pytest
from django.core import mail
from standardwebhooks.webhooks import Webhook

from integrations.hooks.services import MAX_HOOKS, hook_create
from integrations.models import Integration
from pullapi.services import api_key_create
from tests.conftest import CommitClient, add_submission, submit
from tests.fakes import Reply

HOOKS = "/api/v1/hooks"


def key_client(key: str) -> CommitClient:
    client = CommitClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def make_key(owner, forms, scopes=("read", "hooks")) -> str:
    return api_key_create(owner=owner, name="zapier", forms=[str(f.pk) for f in forms],
                          scopes=list(scopes))[1]


@pytest.fixture
def zapier(user, form) -> CommitClient:
    """A client holding a hooks-scoped key for ``form``."""
    return key_client(make_key(user, [form]))


@pytest.fixture
def other_form(user):
    from forms_app.services import form_create

    return form_create(owner=user, name="Other", notify_owner=False)


def subscribe(client, form, url="https://hooks.zapier.example/catch/1", **extra):
    body = {"url": url, "formId": str(form.pk), **extra}
    return client.post(HOOKS, body, format="json")


def test_a_hooks_key_subscribes_and_sees_the_secret_once(zapier, form):
    response = subscribe(zapier, form, events=["submission.created", "submission.deleted"])

    assert response.status_code == 201
    body = response.json()
    hook = Integration.objects.get(hook=True)
    assert body == {
        "_id": str(hook.pk),
        "id": str(hook.pk),  # Zapier's examples unsubscribe with subscribeData.id
        "url": "https://hooks.zapier.example/catch/1",
        "formId": str(form.pk),
        "events": ["submission.created", "submission.deleted"],
        "createdAt": body["createdAt"],
        "signingSecret": hook.secrets["signingSecret"],
    }
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/=]+", body["signingSecret"])
    assert response["Cache-Control"] == "no-store"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", body["createdAt"])
    listed = zapier.get(HOOKS)
    assert listed.status_code == 200
    assert listed.json() == [{key: value for key, value in body.items()
                              if key != "signingSecret"}]
    assert "X-RateLimit-Remaining" in listed


def test_events_default_to_created_and_a_slug_names_the_form(zapier, form):
    response = subscribe(zapier, form)
    by_slug = zapier.post(HOOKS, {"url": "https://h.example/2", "formId": form.slug},
                          format="json")

    assert response.json()["events"] == ["submission.created"]
    assert by_slug.status_code == 201
    assert by_slug.json()["formId"] == str(form.pk)


@pytest.mark.parametrize(("method", "path"), [
    ("post", HOOKS), ("get", HOOKS), ("delete", f"{HOOKS}/00000000-0000-0000-0000-000000000000"),
    ("get", f"{HOOKS}/sample"),
])
def test_a_read_only_key_is_403(puller, form, method, path):
    response = getattr(puller, method)(path, {"url": "https://h.example", "formId": str(form.pk)}
                                       if method == "post" else None, format="json")

    assert response.status_code == 403
    assert response.json()["error"] == "insufficient_scope"
    assert "X-RateLimit-Limit" in response
    assert not Integration.objects.filter(hook=True).exists()


def test_a_key_cannot_subscribe_to_a_form_it_does_not_hold(zapier, other_form, other_user):
    from forms_app.services import form_create

    strangers = form_create(owner=other_user, name="Theirs", notify_owner=False)

    for target in (other_form, strangers):
        response = subscribe(zapier, target)
        assert response.status_code == 404
        assert response.json()["error"] == "form_not_found"
    assert zapier.get(f"{HOOKS}/sample", {"formId": str(other_form.pk)}).status_code == 404
    assert not Integration.objects.filter(hook=True).exists()


def test_the_dashboard_subscribes_to_any_form_of_the_account(owner_api, zapier, form,
                                                            other_form, other_api):
    made = subscribe(owner_api, other_form)
    by_key = subscribe(zapier, form)

    assert made.status_code == 201
    # The dashboard lists all of the account's, a key only those made with it.
    assert {row["_id"] for row in owner_api.get(HOOKS).json()} == {
        made.json()["_id"], by_key.json()["_id"]}
    assert [row["_id"] for row in zapier.get(HOOKS).json()] == [by_key.json()["_id"]]
    assert other_api.get(HOOKS).json() == []
    assert subscribe(other_api, other_form).status_code == 404


def test_unsubscribing(zapier, owner_api, form):
    first = subscribe(zapier, form).json()["_id"]
    second = subscribe(owner_api, form).json()["_id"]

    assert zapier.delete(f"{HOOKS}/{second}").status_code == 404  # not made with this key
    response = zapier.delete(f"{HOOKS}/{first}")
    assert response.status_code == 204
    assert response.content == b""
    assert zapier.delete(f"{HOOKS}/{first}").status_code == 404
    assert zapier.delete(f"{HOOKS}/not-an-id").status_code == 404
    assert owner_api.delete(f"{HOOKS}/{second}").status_code == 204
    assert not Integration.objects.filter(hook=True).exists()


@pytest.mark.parametrize(("body", "field"), [
    ({"url": "http://hooks.example/x"}, "url"),
    ({"url": "https://127.0.0.1/x"}, "url"),
    ({"url": "https://10.0.0.8/x"}, "url"),
    ({"url": "not a url"}, "url"),
    ({"url": 5}, "url"),
    ({"events": ["submission.updated"]}, "events"),
    ({"events": []}, "events"),
    ({"events": "submission.created"}, "events"),
    ({"formId": None}, "formId"),
    ({"colour": "red"}, "colour"),
])
def test_bad_input_is_400_by_field(zapier, form, body, field):
    response = zapier.post(HOOKS, {"url": "https://h.example/ok", "formId": str(form.pk),
                                   **body}, format="json")

    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert field in response.json()["details"]
    assert not Integration.objects.filter(hook=True).exists()


def test_a_missing_form_id_is_400(zapier):
    response = zapier.post(HOOKS, {"url": "https://h.example/ok"}, format="json")

    assert response.status_code == 400
    assert "formId" in response.json()["details"]


def test_private_targets_only_when_allowed(zapier, form, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True

    assert subscribe(zapier, form, url="http://127.0.0.1:9/hook").status_code == 201


def test_at_most_50_subscriptions_an_account(zapier, owner_api, user, form):
    for n in range(MAX_HOOKS):
        hook_create(owner=user, api_key=None, url=f"https://h.example/{n}",
                    form_id=str(form.pk))

    response = subscribe(zapier, form)

    assert response.status_code == 400
    assert "hooks" in response.json()["details"]
    assert Integration.objects.filter(hook=True).count() == MAX_HOOKS


def test_subscriptions_are_not_integrations(owner_api, zapier, form):
    subscribe(zapier, form)
    hook_id = Integration.objects.get(hook=True).pk

    assert owner_api.get("/api/v1/integrations").json() == []
    assert owner_api.get(f"/api/v1/integrations/{hook_id}/status").status_code == 404
    assert owner_api.delete(f"/api/v1/integrations/{hook_id}").status_code == 404
    created = owner_api.post("/api/v1/integrations",
                             {"type": "WEBHOOK", "config": {"url": "https://h.example"}},
                             format="json")
    assert created.status_code == 201


def test_revoking_the_key_ends_its_subscriptions(owner_api, user, form):
    plain = make_key(user, [form])
    client = key_client(plain)
    subscribe(client, form)
    kept = subscribe(owner_api, form).json()["_id"]
    key_id = Integration.objects.get(api_key__isnull=False).api_key_id

    assert owner_api.delete(f"/api/v1/api-keys/{key_id}").status_code == 204

    assert list(Integration.objects.filter(hook=True).values_list("pk", flat=True)) == [
        Integration.objects.get(pk=kept).pk]
    assert client.get(HOOKS).status_code == 401


def test_a_subscriber_receives_signed_events(zapier, public, form, receiver):
    secret = subscribe(zapier, form, url=f"{receiver.url}/zap").json()["signingSecret"]

    submit(public, form, {"name": "Ada", "email": "ada@example.com"})

    (request,) = receiver.requests
    headers = {name.lower(): value for name, value in request.headers.items()}
    Webhook(secret).verify(request.body, headers)
    assert request.json()["data"]["fields"] == {"name": "Ada", "email": "ada@example.com"}


def test_a_410_deletes_the_subscription(zapier, public, form, receiver):
    subscribe(zapier, form, url=f"{receiver.url}/gone")
    receiver.handler = lambda _request: Reply(410)
    mail.outbox.clear()

    submit(public, form)

    assert len(receiver.requests) == 1
    assert not Integration.objects.filter(hook=True).exists()
    assert zapier.get(HOOKS).json() == []
    assert not [m for m in mail.outbox if "integration" in m.subject]


def test_a_410_still_only_disables_an_integration(owner_api, public, form, receiver):
    owner_api.post("/api/v1/integrations",
                   {"type": "WEBHOOK", "config": {"url": f"{receiver.url}/wh"}}, format="json")
    receiver.handler = lambda _request: Reply(410)

    submit(public, form)

    assert Integration.objects.get(type="WEBHOOK").enabled is False


def test_the_sample_is_the_three_newest_inbox_submissions(zapier, owner_api, form, user):
    made = [add_submission(form, {"name": f"n{n}"}) for n in range(4)]
    from submissions.models import Submission

    for n, submission in enumerate(made):  # distinct times, oldest first
        Submission.objects.filter(pk=submission.pk).update(
            submitted_at=submission.submitted_at.replace(year=2020, month=1, day=n + 1))
    Submission.objects.filter(pk=made[3].pk).update(status="spam")

    response = zapier.get(f"{HOOKS}/sample", {"formId": str(form.pk)})

    assert response.status_code == 200
    body = response.json()
    assert [event["data"]["id"] for event in body] == [str(s.pk) for s in made[2::-1]]
    assert body[0] == {
        "type": "submission.created",
        "timestamp": "2020-01-03T" + body[0]["timestamp"][11:],
        "data": {"id": str(made[2].pk), "formId": str(form.pk), "formSlug": form.slug,
                 "formName": form.name, "submittedAt": body[0]["data"]["submittedAt"],
                 "fields": {"name": "n2"}},
    }
    assert owner_api.get(f"{HOOKS}/sample", {"formId": form.slug}).json() == body


def test_the_sample_needs_a_form_id(zapier):
    response = zapier.get(f"{HOOKS}/sample")

    assert response.status_code == 400
    assert "formId" in response.json()["details"]


def test_anonymous_is_401_and_keys_stay_out_of_the_dashboard_api(api, zapier, form):
    assert api.get(HOOKS).status_code == 401
    assert api.post(HOOKS, {}, format="json").status_code == 401
    assert zapier.get("/api/v1/forms").status_code == 401
    assert zapier.get("/api/v1/integrations").status_code == 401
    assert zapier.get("/api/v1/erasures").status_code == 401
    assert zapier.get("/api/v1/submissions", {"formId": str(form.pk)}).status_code == 200


def test_a_key_revoked_while_it_subscribes_leaves_no_subscription(zapier, form, monkeypatch):
    """The owner's revoke commits while the key's subscribe request is past authentication."""
    from integrations.hooks import services as hook_services
    from pullapi.models import ApiKey
    from pullapi.services import api_key_revoke

    real = hook_services.reachable_form

    def revoked_meanwhile(**kwargs):
        api_key_revoke(api_key=ApiKey.objects.get())
        return real(**kwargs)

    monkeypatch.setattr(hook_services, "reachable_form", revoked_meanwhile)

    response = subscribe(zapier, form)

    assert response.status_code == 401
    assert not Integration.objects.filter(hook=True).exists()
