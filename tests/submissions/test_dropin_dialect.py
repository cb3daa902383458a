"""Formspree's JSON dialect beside the contract's keys (contract, "Drop-in"): a success has
``ok`` and ``next``; every error has ``errors: [{code, message, field?}]`` in Formspree's
codes, each message a sentence a visitor can read."""

from __future__ import annotations

import pytest

from tests.conftest import submit
from tests.fakes import FakeServer, Reply

SITE = "https://site.example"


def errors_of(response) -> list[dict]:
    body = response.json()
    assert body["success"] is False
    for entry in body["errors"]:
        message = entry["message"]
        assert message[:1].isupper() and message.endswith((".", "!")), message
        assert message != body["error"] and "_" not in message.split()[0]
    return body["errors"]


def test_a_success_says_ok_and_where_a_browser_goes(public, form):
    plain = submit(public, form)
    form.redirect_url = "https://thanks.example/done"
    form.save()
    redirected = submit(public, form)

    assert (plain.json()["ok"], plain.json()["next"]) == (True, "http://localhost:8000/thanks")
    assert redirected.json()["next"] == "https://thanks.example/done"


def test_a_honeypot_catch_looks_like_any_success(public, form):
    caught = submit(public, form, {"name": "Bot", "_gotcha": "x"}).json()
    kept = submit(public, form, {"name": "Ada"}).json()

    assert caught.keys() == kept.keys()
    assert (caught["ok"], caught["next"]) == (kept["ok"], kept["next"])


def test_an_unknown_form_is_form_not_found(public, db):
    response = public.post("/f/nope", {"a": 1}, format="json")

    assert response.status_code == 404
    assert errors_of(response) == [
        {"code": "FORM_NOT_FOUND", "message": "There is no form at this address."}]


def test_an_empty_submission_is_empty(public, form):
    response = submit(public, form, {"_gotcha": ""})

    assert response.status_code == 400
    assert errors_of(response) == [{"code": "EMPTY", "message": "The submission has no fields."}]


def test_the_monthly_limit_is_inactive(public, form, user):
    user.monthly_submission_limit = 1
    user.save()
    submit(public, form)

    response = submit(public, form)

    assert response.status_code == 403
    assert [entry["code"] for entry in errors_of(response)] == ["INACTIVE"]


def test_an_origin_refusal_is_blocked(public, form):
    form.allowed_origins = ["https://only.example"]
    form.save()

    response = submit(public, form, HTTP_ORIGIN=SITE)

    assert response.status_code == 403
    assert errors_of(response) == [{"code": "BLOCKED", "message": (
        "This form does not accept submissions from this site.")}]


def test_the_rate_limit_is_blocked(public, form):
    form.rate_limit = 1
    form.save()
    submit(public, form)

    response = submit(public, form)

    assert response.status_code == 429
    assert [entry["code"] for entry in errors_of(response)] == ["BLOCKED"]
    assert response["Retry-After"]


def test_a_failed_captcha_is_blocked(public, form, settings):
    with FakeServer(lambda request: Reply(200, {"success": False})) as server:
        settings.RECAPTCHA_VERIFY_URL = server.url
        form.set_recaptcha_secret("secret")
        form.save()
        response = submit(public, form, {"name": "Ada", "g-recaptcha-response": "bad"})

    assert response.status_code == 422
    assert [entry["code"] for entry in errors_of(response)] == ["BLOCKED"]


def test_a_field_the_server_cannot_store_is_named(public, form):
    response = submit(public, form, {"name": "Ada", "message": "nul \u0000 here"})

    assert response.status_code == 400
    assert errors_of(response) == [
        {"code": "UNSPECIFIED", "message": "The submission holds something that cannot be stored."},
        {"code": "UNSPECIFIED", "field": "message",
         "message": "Message contains the character U+0000."},
    ]


@pytest.mark.parametrize("headers", [{}, {"HTTP_ACCEPT": "application/json"}])
def test_every_error_answer_has_them_whatever_made_it_json(public, form, headers):
    response = public.post(f"/f/{form.slug}", "not json", content_type="application/json",
                           **headers)

    assert response.status_code == 400
    assert [entry["code"] for entry in errors_of(response)] == ["UNSPECIFIED"]
