import base64
import re

import pytest

from integrations.models import Integration
from tests.integrations.conftest import EMAIL_CONFIG

URL = "/api/v1/integrations"


def create(client, type_, config, **extra):
    return client.post(URL, {"type": type_, "config": config, **extra}, format="json")


def test_create_webhook_shows_signing_secret_once(owner_api):
    response = create(owner_api, "WEBHOOK", {"url": "https://hooks.example.com/in"})

    assert response.status_code == 201
    body = response.json()
    integration = Integration.objects.get()
    assert body == {
        "_id": str(integration.pk),
        "type": "WEBHOOK",
        "enabled": True,
        "createdAt": body["createdAt"],
        "formId": None,
        "config": {
            "url": "https://hooks.example.com/in",
            "events": ["submission.created"],
            "signingSecret": body["config"]["signingSecret"],
        },
    }
    secret = body["config"]["signingSecret"]
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/=]+", secret)
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    assert secret not in integration.secrets_encrypted
    listed = owner_api.get(URL).json()[0]
    assert listed["config"] == {"url": "https://hooks.example.com/in",
                                "events": ["submission.created"]}


def test_create_email_masks_api_key_after_creation(owner_api):
    response = create(owner_api, "EMAIL", dict(EMAIL_CONFIG, subject="New lead"))

    assert response.status_code == 201
    assert response.json()["config"]["apiKey"] == "re_live_secret_1234"
    listed = owner_api.get(URL).json()[0]
    assert listed["config"] == {
        "apiKey": "****1234",
        "fromEmail": "Forms <forms@example.com>",
        "toEmail": "owner@example.com",
        "subject": "New lead",
    }
    assert "re_live_secret_1234" not in Integration.objects.get().secrets_encrypted


def test_create_scoped_to_a_form(owner_api, form):
    body = create(owner_api, "WEBHOOK", {"url": "https://h.example.com"}, formId=form.slug).json()

    assert body["formId"] == str(form.pk)


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"type": "SMS", "config": {}}, "type"),
        ({"type": "GOOGLE_SHEETS", "config": {}}, "type"),
        ({"type": "WEBHOOK", "config": "https://x.example"}, "config"),
        ({"type": "WEBHOOK", "config": {}}, "config.url"),
        ({"type": "WEBHOOK", "config": {"url": "http://hooks.example.com"}}, "config.url"),
        ({"type": "WEBHOOK", "config": {"url": "https://["}}, "config.url"),  # urlsplit raises
        ({"type": "SLACK", "config": {"webhookUrl": "https://[zz]/x"}}, "config.webhookUrl"),
        ({"type": "WEBHOOK", "config": {"url": "https://127.0.0.1/x"}}, "config.url"),
        ({"type": "WEBHOOK", "config": {"url": "https://10.1.2.3/x"}}, "config.url"),
        ({"type": "WEBHOOK", "config": {"url": "https://localhost/x"}}, "config.url"),
        (
            {"type": "WEBHOOK", "config": {"url": "https://a.example", "signingSecret": "x"}},
            "config.signingSecret",
        ),
        (
            {"type": "WEBHOOK", "config": {"url": "https://a.example", "colour": "x"}},
            "config.colour",
        ),
        ({"type": "EMAIL", "config": {**EMAIL_CONFIG, "toEmail": "nope"}}, "config.toEmail"),
        ({"type": "EMAIL", "config": {**EMAIL_CONFIG, "fromEmail": ""}}, "config.fromEmail"),
        ({"type": "EMAIL", "config": {**EMAIL_CONFIG, "apiKey": ""}}, "config.apiKey"),
        ({"type": "EMAIL", "config": {**EMAIL_CONFIG, "subject": 5}}, "config.subject"),
        ({"type": "WEBHOOK", "config": {"url": "https://a.example"}, "formId": "nope"}, "formId"),
        ({"type": "WEBHOOK", "config": {"url": "https://a.example"}, "extra": 1}, "extra"),
        ({"type": "WEBHOOK", "config": {"url": "https://a.example", "events": []}},
         "config.events"),
        ({"type": "WEBHOOK", "config": {"url": "https://a.example", "events": "submission.spam"}},
         "config.events"),
        ({"type": "WEBHOOK", "config": {"url": "https://a.example", "events": ["form.created"]}},
         "config.events"),
        ({"type": "WEBHOOK",
          "config": {"url": "https://a.example", "events": ["submission.spam"] * 2}},
         "config.events"),
    ],
)
def test_create_rejects_bad_input(owner_api, payload, field):
    response = owner_api.post(URL, payload, format="json")

    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert field in response.json()["details"]
    assert not Integration.objects.exists()


def test_http_and_private_urls_allowed_for_local_development(owner_api, allow_private):
    response = create(owner_api, "WEBHOOK", {"url": "http://127.0.0.1:9000/hook"})

    assert response.status_code == 201


def test_cannot_scope_to_another_users_form(other_api, form):
    response = create(other_api, "WEBHOOK", {"url": "https://a.example"}, formId=str(form.pk))

    assert response.status_code == 400


def test_list_shows_only_own_integrations(owner_api, other_api):
    create(owner_api, "WEBHOOK", {"url": "https://mine.example"})
    create(other_api, "WEBHOOK", {"url": "https://theirs.example"})

    assert [i["config"]["url"] for i in owner_api.get(URL).json()] == ["https://mine.example"]


def test_patch_merges_config_field_by_field(owner_api):
    _id = create(owner_api, "EMAIL", dict(EMAIL_CONFIG)).json()["_id"]

    response = owner_api.patch(f"{URL}/{_id}", {"config": {"subject": "Hi"}}, format="json")

    assert response.status_code == 200
    assert response.json()["config"] == {
        "apiKey": "****1234",
        "fromEmail": "Forms <forms@example.com>",
        "toEmail": "owner@example.com",
        "subject": "Hi",
    }
    assert Integration.objects.get().secrets["apiKey"] == "re_live_secret_1234"


def test_patch_can_replace_the_api_key(owner_api):
    _id = create(owner_api, "EMAIL", dict(EMAIL_CONFIG)).json()["_id"]

    body = owner_api.patch(
        f"{URL}/{_id}", {"config": {"apiKey": "re_new_9876"}}, format="json"
    ).json()

    assert body["config"]["apiKey"] == "****9876"


def test_patch_enabled(owner_api):
    _id = create(owner_api, "WEBHOOK", {"url": "https://a.example"}).json()["_id"]

    body = owner_api.patch(f"{URL}/{_id}", {"enabled": False}, format="json").json()

    assert body["enabled"] is False
    assert Integration.objects.get().enabled is False


def test_patch_cannot_change_signing_secret(owner_api):
    created = create(owner_api, "WEBHOOK", {"url": "https://a.example"}).json()

    response = owner_api.patch(
        f"{URL}/{created['_id']}", {"config": {"signingSecret": "whsec_x"}}, format="json"
    )

    assert response.status_code == 400
    assert "config.signingSecret" in response.json()["details"]
    assert Integration.objects.get().secrets["signingSecret"] == created["config"]["signingSecret"]


def test_failed_patch_changes_nothing(owner_api):
    _id = create(owner_api, "WEBHOOK", {"url": "https://a.example"}).json()["_id"]

    response = owner_api.patch(
        f"{URL}/{_id}", {"enabled": False, "config": {"url": "ftp://x"}}, format="json"
    )

    assert response.status_code == 400
    integration = Integration.objects.get()
    assert integration.enabled is True
    assert integration.config == {"url": "https://a.example", "events": ["submission.created"]}


def test_delete_is_204(owner_api):
    _id = create(owner_api, "WEBHOOK", {"url": "https://a.example"}).json()["_id"]

    response = owner_api.delete(f"{URL}/{_id}")

    assert response.status_code == 204
    assert not Integration.objects.exists()


def test_other_user_gets_404_and_anonymous_401(owner_api, other_api, public):
    _id = create(owner_api, "WEBHOOK", {"url": "https://a.example"}).json()["_id"]

    for method, path in [
        ("patch", _id),
        ("delete", _id),
        ("post", f"{_id}/test"),
        ("get", f"{_id}/status"),
    ]:
        assert getattr(other_api, method)(f"{URL}/{path}", {}, format="json").status_code == 404
        assert getattr(public, method)(f"{URL}/{path}", {}, format="json").status_code == 401
    assert Integration.objects.filter(pk=_id, enabled=True).exists()


def test_put_is_405(owner_api):
    _id = create(owner_api, "WEBHOOK", {"url": "https://a.example"}).json()["_id"]

    assert owner_api.put(f"{URL}/{_id}", {}, format="json").status_code == 405


def test_new_integration_has_never_run(owner_api):
    _id = create(owner_api, "WEBHOOK", {"url": "https://a.example"}).json()["_id"]

    assert owner_api.get(f"{URL}/{_id}/status").json() == {
        "status": "never_run",
        "lastRun": None,
        "lastError": None,
        "failedDeliveries": 0,
    }


def test_schema_documents_the_config_of_each_type(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    components = schema["components"]["schemas"]

    def config_of(component):
        return {
            option["title"]: option.get("required", [])
            for option in (components[component]["properties"]["config"].get("oneOf")
                           or components[component]["properties"]["config"]["anyOf"])
        }

    create = schema["paths"]["/api/v1/integrations"]["post"]["requestBody"]["content"]
    variants = create["application/json"]["schema"]["oneOf"]
    # Each type with its own config: one kind's config never passes for another's.
    assert {
        variant["properties"]["type"]["enum"][0]: (
            variant["properties"]["config"]["title"],
            variant["properties"]["config"].get("required", []),
        )
        for variant in variants
    } == {
        "WEBHOOK": ("WebhookConfig", ["url"]),
        "EMAIL": ("EmailConfig", ["apiKey", "fromEmail", "toEmail"]),
        "SLACK": ("SlackConfig", ["webhookUrl"]),
        "DISCORD": ("DiscordConfig", ["webhookUrl"]),
    }
    assert config_of("PatchedIntegrationUpdateRequest") == {
        "WebhookConfigPatch": [],
        "EmailConfigPatch": [],
        "SlackConfigPatch": [],
        "DiscordConfigPatch": [],
    }
    patch = components["PatchedIntegrationUpdateRequest"]["properties"]["config"]
    # anyOf, each closed: {} fits every kind, and a key of no kind fits none.
    assert "oneOf" not in patch
    assert all(option["additionalProperties"] is False for option in patch["anyOf"])
    assert set(config_of("Integration")) == {
        "WebhookConfigOut",
        "EmailConfigOut",
        "SlackConfigOut",
        "DiscordConfigOut",
        "GoogleSheetsConfig",
    }
