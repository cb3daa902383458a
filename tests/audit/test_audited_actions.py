"""Every change an owner makes through the API records one entry in their log, in the
change's transaction (contract, "Teams, roles and the audit log": "Audit log")."""

import json

import pyotp
import pytest

from accounts.models import User
from audit.models import Entry
from submissions.models import Submission
from tests.audit.conftest import entries, only
from tests.conftest import PASSWORD, add_submission, create_key

NEW_PASSWORD = "another long passphrase"


def actor_and_target(entry: Entry) -> tuple:
    return entry.actor_id, entry.actor_email, entry.owner_id, entry.target_type


def test_a_form_created_over_the_api(owner_api, user, logged):
    response = owner_api.post("/api/v1/forms", {"name": "Contact"}, format="json")

    entry = only("form.created")
    assert logged() == [{
        "_id": str(entry.pk),
        "at": entry.at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "actor": {"_id": str(user.pk), "email": "owner@example.com"},
        "action": "form.created",
        "target": {"type": "form", "_id": response.json()["_id"], "name": "Contact"},
        "details": {},
    }]


def test_a_form_changed_names_the_settings_never_the_secret(owner_api, user, form):
    response = owner_api.patch(f"/api/v1/forms/{form.pk}", {
        "name": "Renamed", "redirectUrl": "https://example.com/thanks",
        "recaptchaSecret": "6Lc-very-secret-value", "fields": [],
    }, format="json")

    assert response.status_code == 200
    entry = only("form.changed")
    assert actor_and_target(entry) == (user.pk, user.email, user.pk, "form")
    assert entry.target_name == "Renamed"
    assert sorted(entry.details["changed"]) == ["fields", "name", "recaptchaSecret",
                                                "redirectUrl"]
    assert "very-secret" not in json.dumps(entry.details)


def test_a_patch_that_changes_nothing_records_nothing(owner_api, form):
    assert owner_api.patch(f"/api/v1/forms/{form.pk}", {}, format="json").status_code == 200
    same = owner_api.patch(f"/api/v1/forms/{form.pk}", {"name": form.name, "rateLimit": 10},
                           format="json")

    assert same.status_code == 200
    assert entries("form.changed") == []


def test_only_the_settings_whose_values_changed_are_named(owner_api, form):
    owner_api.patch(f"/api/v1/forms/{form.pk}", {"name": form.name, "rateLimit": 25},
                    format="json")

    assert only("form.changed").details == {"changed": ["rateLimit"]}


def test_a_refused_change_records_nothing(owner_api, form, other_user):
    from forms_app.services import form_create

    taken = form_create(owner=other_user, name="Theirs")
    response = owner_api.patch(f"/api/v1/forms/{form.pk}", {"slug": taken.slug}, format="json")

    assert response.status_code == 409
    assert entries("form.changed") == []


def test_a_form_deleted(owner_api, user, form):
    assert owner_api.delete(f"/api/v1/forms/{form.pk}").status_code == 204

    entry = only("form.deleted")
    assert (entry.target_id, entry.target_name) == (str(form.pk), form.name)
    assert entry.owner_id == user.pk


def test_a_change_that_rolls_back_leaves_no_entry(owner_api, form, monkeypatch):
    def fails(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr("forms_app.models.Form.delete", fails)
    owner_api.raise_request_exception = False

    assert owner_api.delete(f"/api/v1/forms/{form.pk}").status_code == 500
    assert entries() == []


@pytest.mark.django_db(transaction=True)
def test_an_entry_outside_a_transaction_is_refused(user):
    from audit.services import NotInTransaction, Target, record

    with pytest.raises(NotInTransaction):
        record(owner_id=user.pk, actor=user, action="form.created", target=Target("form", "x"))
    assert entries() == []


EMAIL_CONFIG = {"apiKey": "re_supersecret_9999", "fromEmail": "a@example.com",
                "toEmail": "b@example.com"}


def test_an_integration_created_changed_and_deleted(owner_api, user):
    created = owner_api.post("/api/v1/integrations", {"type": "EMAIL", "config": EMAIL_CONFIG},
                             format="json")
    ident = created.json()["_id"]
    owner_api.patch(f"/api/v1/integrations/{ident}", {
        "enabled": False, "config": {"apiKey": "re_another_secret_1234"}}, format="json")
    owner_api.delete(f"/api/v1/integrations/{ident}")

    made, changed, deleted = (only(f"integration.{verb}")
                              for verb in ("created", "changed", "deleted"))
    assert (made.target_type, made.target_id, made.target_name) == (
        "integration", ident, "Email to b@example.com")
    assert made.details == {"type": "EMAIL", "formId": None}
    assert changed.details == {"type": "EMAIL", "changed": ["config.apiKey", "enabled"]}
    assert deleted.actor_id == user.pk
    assert "secret" not in json.dumps([e.details for e in entries()] +
                                      [e.target_name for e in entries()])


def test_an_integration_tested(owner_api, hook):
    response = owner_api.post(f"/api/v1/integrations/{hook.pk}/test")

    assert response.status_code == 200
    entry = only("integration.tested")
    assert entry.details == {"type": "WEBHOOK", "success": True}
    assert hook.secrets["signingSecret"] not in json.dumps(entry.details)


def test_a_webhook_created_shows_its_host_and_never_its_secret(owner_api, receiver):
    created = owner_api.post("/api/v1/integrations", {
        "type": "WEBHOOK", "config": {"url": f"{receiver.url}/in?token=abc123"}}, format="json")

    entry = only("integration.created")
    assert entry.target_name == "Webhook to 127.0.0.1"
    text = json.dumps([entry.details, entry.target_name])
    assert created.json()["config"]["signingSecret"] not in text
    assert "abc123" not in text


def test_a_subscription_created_and_deleted(owner_api, user, form):
    created = owner_api.post("/api/v1/hooks", {
        "url": "https://hooks.zapier.example/catch/1", "formId": str(form.pk)}, format="json")
    assert created.status_code == 201
    owner_api.delete(f"/api/v1/hooks/{created.json()['_id']}")

    made, gone = only("subscription.created"), only("subscription.deleted")
    assert made.target_type == gone.target_type == "subscription"
    assert made.target_name == "Webhook to hooks.zapier.example"
    assert made.details == {"type": "WEBHOOK", "formId": str(form.pk),
                            "events": ["submission.created"], "apiKeyId": None}
    assert created.json()["signingSecret"] not in json.dumps(made.details)


def test_an_api_key_created_and_revoked_never_shows_the_key(owner_api, user, form):
    created = owner_api.post("/api/v1/api-keys", {"name": "sync", "forms": [str(form.pk)]},
                             format="json")
    plain, ident = created.json()["key"], created.json()["_id"]
    assert owner_api.delete(f"/api/v1/api-keys/{ident}").status_code == 204

    made, revoked = only("api_key.created"), only("api_key.revoked")
    assert (made.target_type, made.target_id, made.target_name) == ("api_key", ident, "sync")
    assert made.details == {"forms": [str(form.pk)], "scopes": ["read"]}
    assert revoked.details == {"subscriptionsEnded": 0}
    assert plain not in json.dumps([made.details, revoked.details])


def test_a_second_revoke_records_nothing_more(owner_api, user, form):
    from pullapi.models import ApiKey
    from pullapi.services import api_key_revoke

    create_key(user, [form])
    key = ApiKey.objects.get()
    assert owner_api.delete(f"/api/v1/api-keys/{key.pk}").status_code == 204
    with __import__("django.db").db.transaction.atomic():
        api_key_revoke(api_key=key, actor=user)

    assert len(entries("api_key.revoked")) == 1


def test_submissions_deleted_marked_and_exported(owner_api, user, form):
    one, two = add_submission(form, {"name": "Ada"}), add_submission(form, {"name": "Bo"})
    base = f"/api/v1/forms/{form.pk}"

    assert owner_api.post(f"{base}/submissions/{one.pk}/spam").status_code == 200
    assert owner_api.post(f"{base}/submissions/{one.pk}/not-spam").status_code == 200
    assert owner_api.delete(f"{base}/submissions/{two.pk}").status_code == 204
    assert owner_api.get(f"{base}/export", {"format": "csv"}).status_code == 200

    assert only("submissions.marked_spam").details == {"count": 1, "ids": [str(one.pk)]}
    assert only("submissions.marked_not_spam").details == {"count": 1, "ids": [str(one.pk)]}
    assert only("submissions.deleted").details == {"count": 1, "ids": [str(two.pk)]}
    assert only("submissions.exported").details == {"format": "csv", "matching": False}
    for entry in entries():
        assert (entry.target_type, entry.target_id, entry.actor_id) == ("form", str(form.pk),
                                                                         user.pk)
        assert "Ada" not in json.dumps(entry.details)


def test_marking_spam_what_is_spam_already_records_nothing(owner_api, form):
    held = add_submission(form, {"name": "Ada"})
    Submission.objects.filter(pk=held.pk).update(status="spam")

    owner_api.post(f"/api/v1/forms/{form.pk}/submissions/{held.pk}/spam")

    assert entries() == []


def test_an_erasure_names_the_masked_address_only(owner_api, user, form):
    add_submission(form, {"email": "ada@example.com"})

    response = owner_api.post("/api/v1/erasures", {"email": "ada@example.com"}, format="json")

    assert response.status_code == 201
    entry = only("erasure.created")
    assert (entry.target_type, entry.target_id) == ("erasure", response.json()["_id"])
    assert entry.details == {"submissions": 1}
    assert "ada@example.com" not in json.dumps([entry.details, entry.target_name])


def test_a_password_change_in_the_accounts_own_log(owner_api, user):
    response = owner_api.post("/api/auth/change-password", {
        "currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}, format="json")

    assert response.status_code == 200
    entry = only("account.password_changed")
    assert (entry.owner_id, entry.actor_id, entry.target_type, entry.target_id) == (
        user.pk, user.pk, "account", str(user.pk))
    assert entry.details == {"how": "change"}
    assert NEW_PASSWORD not in json.dumps(entry.details) and PASSWORD not in entry.target_name


def test_a_wrong_current_password_records_nothing(owner_api):
    owner_api.post("/api/auth/change-password", {
        "currentPassword": "not it at all", "newPassword": NEW_PASSWORD}, format="json")

    assert entries() == []


def test_two_step_sign_in_turned_on_and_off(owner_api, user):
    secret = owner_api.post("/api/auth/2fa/setup").json()["secret"]
    enabled = owner_api.post("/api/auth/2fa/enable", {"code": pyotp.TOTP(secret).now()},
                             format="json")
    assert enabled.status_code == 200
    from tests.conftest import bearer

    owner_api.credentials(HTTP_AUTHORIZATION=bearer(User.objects.get(pk=user.pk)))
    off = owner_api.post("/api/auth/2fa/disable", {
        "password": PASSWORD, "code": enabled.json()["recoveryCodes"][0]}, format="json")

    assert off.status_code == 200, off.content
    assert only("account.two_factor_enabled").details == {}
    assert only("account.two_factor_disabled").actor_id == user.pk
    text = json.dumps([entry.details for entry in entries()])
    assert secret not in text and enabled.json()["recoveryCodes"][1] not in text


def test_a_public_submission_records_nothing(public, form):
    from tests.conftest import submit

    assert submit(public, form).status_code == 200

    assert entries() == []
