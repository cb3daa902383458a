"""JSON types are strict on every endpoint (contract, "Input limits"): a field documented as a
string takes only a JSON string, a boolean only true or false, an integer only an integer.
Nothing is coerced, and a refused request changes nothing."""

import pytest

from forms_app.models import Form
from integrations.models import Integration
from pullapi.models import ApiKey
from tests.conftest import PASSWORD


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": 12}, "name"),
        ({"name": True}, "name"),
        ({"name": ["Contact"]}, "name"),
        ({"name": "Contact", "honeypotField": 123}, "honeypotField"),
        ({"name": "Contact", "redirectUrl": 5}, "redirectUrl"),
        ({"name": "Contact", "recaptchaSecret": 99}, "recaptchaSecret"),
        ({"name": "Contact", "rateLimit": "10"}, "rateLimit"),
        ({"name": "Contact", "rateLimit": True}, "rateLimit"),
        ({"name": "Contact", "rateLimit": 10.5}, "rateLimit"),
        ({"name": "Contact", "allowedOrigins": [1]}, "allowedOrigins"),
    ],
)
def test_form_create_refuses_other_types(owner_api, body, field):
    response = owner_api.post("/api/v1/forms", body, format="json")

    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert field in response.json()["details"]
    assert not Form.objects.exists()


def test_form_update_refuses_a_number_for_the_name(owner_api, form):
    response = owner_api.patch(f"/api/v1/forms/{form.pk}", {"name": 12}, format="json")

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"name"}
    form.refresh_from_db()
    assert form.name == "Contact"


@pytest.mark.parametrize(
    "body",
    [
        {"email": 12, "password": PASSWORD},
        {"email": "new@example.com", "password": 12345678901234},
        {"email": "new@example.com", "password": None},
    ],
)
def test_signup_refuses_other_types(api, db, body):
    response = api.post("/api/auth/signup", body, format="json")

    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"


def test_a_numeric_code_is_refused_not_coerced(api, db):
    response = api.post(
        "/api/auth/verify-email", {"email": "a@example.com", "code": 123456}, format="json"
    )

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"code"}


@pytest.mark.parametrize(
    "body", [{"onboardingComplete": "true"}, {"onboardingComplete": 1}, {"name": 7}]
)
def test_profile_refuses_other_types(owner_api, user, body):
    response = owner_api.patch("/api/auth/me", body, format="json")

    assert response.status_code == 400
    user.refresh_from_db()
    assert user.onboarding_complete is False
    assert user.name == ""


@pytest.mark.parametrize("enabled", ["false", 0, None])
def test_integration_enabled_takes_only_a_boolean(owner_api, enabled):
    created = owner_api.post(
        "/api/v1/integrations",
        {"type": "WEBHOOK", "config": {"url": "https://hooks.example.com/in"}},
        format="json",
    ).json()

    response = owner_api.patch(
        f"/api/v1/integrations/{created['_id']}", {"enabled": enabled}, format="json"
    )

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"enabled"}
    assert Integration.objects.get().enabled is True


def test_integration_form_id_takes_only_a_string(owner_api, form):
    response = owner_api.post(
        "/api/v1/integrations",
        {"type": "WEBHOOK", "config": {"url": "https://hooks.example.com/in"}, "formId": 1},
        format="json",
    )

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"formId"}


@pytest.mark.parametrize(
    ("body", "field"), [({"name": 5}, "name"), ({"name": "sync", "forms": [1]}, "forms")]
)
def test_api_key_create_refuses_other_types(owner_api, form, body, field):
    body = {"forms": [str(form.pk)], **body}

    response = owner_api.post("/api/v1/api-keys", body, format="json")

    assert response.status_code == 400
    assert field in response.json()["details"]
    assert not ApiKey.objects.exists()


def test_query_parameters_are_still_read_from_text(owner_api, form):
    response = owner_api.get(f"/api/v1/forms/{form.pk}/submissions?page=1&limit=5")

    assert response.status_code == 200
    assert response.json()["limit"] == 5
