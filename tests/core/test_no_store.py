"""Cache-Control: no-store on every answer that carries submission data or a secret
(contract, "Operations"): one middleware rule, for the API, exports, streams and pages."""

import pytest
from django.test import Client

from tests.conftest import PASSWORD, add_submission


@pytest.fixture
def stored(form):
    return add_submission(form, {"email": "ada@example.com"})


def test_api_answers_are_no_store(owner_api, form, stored):
    paths = [
        "/api/auth/me",
        "/api/v1/forms",
        f"/api/v1/forms/{form.pk}",
        f"/api/v1/forms/{form.pk}/submissions",
        f"/api/v1/forms/{form.pk}/export?format=csv",
        f"/api/v1/forms/{form.pk}/export?format=json",
    ]
    for path in paths:
        response = owner_api.get(path)
        assert response.status_code == 200, path
        assert response["Cache-Control"] == "no-store", path


def test_a_new_api_key_and_a_signing_secret_are_no_store(owner_api, form):
    key = owner_api.post("/api/v1/api-keys", {"name": "sync", "forms": [str(form.pk)]},
                         format="json")
    hook = owner_api.post("/api/v1/integrations", {
        "type": "WEBHOOK", "formId": str(form.pk),
        "config": {"url": "https://hooks.example.com/in"}}, format="json")

    assert key.status_code == hook.status_code == 201
    assert key["Cache-Control"] == hook["Cache-Control"] == "no-store"


def test_pull_pages_and_the_stream_are_no_store(puller, form, stored):
    page = puller.get("/api/v1/submissions", {"formId": form.slug})
    stream = puller.get("/api/v1/submissions/stream", {"formId": form.slug})

    assert page["Cache-Control"] == stream["Cache-Control"] == "no-store"


def test_errors_and_sign_in_answers_are_no_store(api, user):
    signed_in = api.post("/api/auth/login", {"email": user.email, "password": PASSWORD},
                         format="json")
    missing = api.get("/api/v1/nowhere")

    assert signed_in["Cache-Control"] == missing["Cache-Control"] == "no-store"


def test_dashboard_pages_and_exports_are_no_store(user, form, stored):
    browser = Client()
    browser.post("/dashboard/login", {"email": user.email, "password": PASSWORD})

    for path in ["/dashboard/", f"/dashboard/forms/{form.pk}",
                 f"/dashboard/forms/{form.pk}/export?format=csv", "/dashboard/account"]:
        response = browser.get(path)
        assert response.status_code == 200, path
        assert response["Cache-Control"] == "no-store", path


def test_the_api_description_stays_cacheable(api, db):
    assert "Cache-Control" not in api.get("/api/schema/")
