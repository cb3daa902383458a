import pytest

from integrations.models import Delivery, Integration
from integrations.services import integration_create
from tests.conftest import submit
from tests.fakes import Reply
from tests.integrations.conftest import EMAIL_CONFIG


def test_email_request_is_exactly_the_provider_call(public, form, mailer, provider):
    submit(public, form, {"name": "Ada <script>", "email": "ada@example.com", "topics": ["a", "b"]})

    assert len(provider.requests) == 1
    request = provider.requests[0]
    assert (request.method, request.path) == ("POST", "/emails")
    assert request.headers["Authorization"] == "Bearer re_live_secret_1234"
    assert request.headers["Content-Type"] == "application/json"
    message = request.json()
    assert set(message) == {"from", "to", "subject", "text", "html", "reply_to"}
    assert message["from"] == "Forms <forms@example.com>"
    assert message["to"] == ["owner@example.com"]
    assert message["subject"] == "New submission: Contact"
    assert message["reply_to"] == "ada@example.com"
    assert "name: Ada <script>" in message["text"]
    assert "topics: a, b" in message["text"]
    assert "<script>" not in message["html"]
    assert "Ada &lt;script&gt;" in message["html"]


def test_fields_appear_in_submitted_order(public, form, mailer, provider):
    submit(public, form, {"zeta": "1", "alpha": "2"})

    text = provider.requests[0].json()["text"]
    assert text.index("zeta") < text.index("alpha")


def test_custom_subject(public, form, user, provider):
    integration_create(owner=user, type="EMAIL", config={**EMAIL_CONFIG, "subject": "Lead!"})

    submit(public, form)

    assert provider.requests[0].json()["subject"] == "Lead!"


@pytest.mark.parametrize("fields", [{"name": "Ada"}, {"email": "not-an-address"}])
def test_no_reply_to_without_a_valid_email_field(public, form, mailer, provider, fields):
    submit(public, form, fields)

    assert "reply_to" not in provider.requests[0].json()


@pytest.mark.parametrize("status", [500, 503, 429])
def test_provider_outage_is_retried(public, form, mailer, provider, status):
    provider.handler = lambda _r: Reply(status, {"message": "try later"})

    submit(public, form)

    delivery = Delivery.objects.get()
    assert delivery.state == "pending"
    assert Integration.objects.get().status == "failing"


def test_provider_refusal_is_final_with_its_message(public, form, mailer, provider):
    provider.handler = lambda _r: Reply(422, {"message": "The from domain is not verified."})

    submit(public, form)

    delivery = Delivery.objects.get()
    assert delivery.state == "failed"
    integration = Integration.objects.get()
    assert integration.status == "failing"
    assert integration.last_error == "HTTP 422: The from domain is not verified."


def test_email_test_event(owner_api, mailer, provider):
    response = owner_api.post(f"/api/v1/integrations/{mailer.pk}/test")

    assert response.json()["success"] is True
    assert "Ada Lovelace" in provider.requests[0].json()["text"]


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"fromEmail": "Shop <shop@example.com>\r\nBcc: all@example.com"}, "config.fromEmail"),
        ({"fromEmail": "Sh\nop <shop@example.com>"}, "config.fromEmail"),
        ({"toEmail": "owner@example.com\nBcc: x@example.com"}, "config.toEmail"),
        ({"subject": "Lead\r\nBcc: x@example.com"}, "config.subject"),
        ({"subject": "Lead\x00"}, "config.subject"),
        ({"subject": "Lead\u2028more"}, "config.subject"),
        ({"autoresponse": {"subject": "Thanks\nBcc: x@example.com", "text": "Hi"}},
         "config.autoresponse.subject"),
    ],
)
def test_control_characters_are_refused_in_mail_headers(owner_api, form, config, field):
    body = {"type": "EMAIL", "formId": str(form.pk), "config": {**EMAIL_CONFIG, **config}}

    response = owner_api.post("/api/v1/integrations", body, format="json")

    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert list(response.json()["details"]) == [field]


def test_a_line_break_in_the_autoresponse_text_is_fine(owner_api, form):
    config = {**EMAIL_CONFIG, "autoresponse": {"subject": "Thanks", "text": "Hi,\n\nthanks."}}
    body = {"type": "EMAIL", "formId": str(form.pk), "config": config}

    assert owner_api.post("/api/v1/integrations", body, format="json").status_code == 201
