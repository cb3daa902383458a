import re

import pytest

from forms_app.models import Form
from submissions.models import Submission
from tests.conftest import submit

FORMS = "/api/v1/forms"


def detail(form_or_id):
    return f"{FORMS}/{getattr(form_or_id, 'pk', form_or_id)}"


def test_create_form_returns_full_object(owner_api, settings):
    response = owner_api.post(FORMS, {"name": "Contact"}, format="json")

    assert response.status_code == 201
    body = response.json()
    form = Form.objects.get()
    assert body == {
        "_id": str(form.pk),
        "slug": form.slug,
        "name": "Contact",
        "endpoint": f"http://localhost:8000/api/v1/f/{form.slug}",
        "redirectUrl": None,
        "allowedOrigins": [],
        "rateLimit": 10,
        "honeypotField": None,
        "captchaProvider": "recaptcha",
        "spamFilter": "on",
        "blockedWords": [],
        "retentionDays": None,
        "fileUploads": None,
        "notifyOwner": True,
        "fields": None,
        "allowExtraFields": True,
        "recaptchaEnabled": False,
        "submissionCount": 0,
        "spamCount": 0,
        "createdAt": body["createdAt"],
        "updatedAt": body["updatedAt"],
        "teamId": None,
        "role": "owner",
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", body["createdAt"])


def test_slugs_are_random_url_safe_and_long_enough(owner_api):
    slugs = [
        owner_api.post(FORMS, {"name": f"f{i}"}, format="json").json()["slug"] for i in range(5)
    ]

    assert len(set(slugs)) == 5
    for slug in slugs:
        assert re.fullmatch(r"[A-Za-z0-9_-]{8,}", slug)


def test_a_slug_never_reads_as_a_command_line_option(monkeypatch):
    from forms_app import models

    # token_urlsafe's first character is "-" or "_" one time in 32; force it to be, then not.
    drawn = iter(["-abcdefghijk", "_abcdefghijk", "Xabcdefghijk"])
    monkeypatch.setattr(models.secrets, "token_urlsafe", lambda _n: next(drawn))

    assert models.new_slug() == "Xabcdefghijk"


def test_create_with_every_setting(owner_api):
    payload = {
        "name": "Signup",
        "redirectUrl": "https://example.com/thanks",
        "allowedOrigins": ["https://Example.com:443", "http://localhost:3000"],
        "rateLimit": 50,
        "honeypotField": "_gotcha",
        "recaptchaSecret": "s3cret",
    }

    body = owner_api.post(FORMS, payload, format="json").json()

    assert body["redirectUrl"] == "https://example.com/thanks"
    assert body["allowedOrigins"] == ["https://example.com", "http://localhost:3000"]
    assert body["rateLimit"] == 50
    assert body["honeypotField"] == "_gotcha"
    assert body["recaptchaEnabled"] is True
    assert "recaptchaSecret" not in body
    assert "s3cret" not in Form.objects.get().recaptcha_secret_encrypted


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": "ok", "redirectUrl": "/thanks"}, "redirectUrl"),
        ({"name": "ok", "redirectUrl": "ftp://example.com/x"}, "redirectUrl"),
        ({"name": "ok", "redirectUrl": "http://["}, "redirectUrl"),  # urlsplit raises
        ({"name": "ok", "redirectUrl": "https://[zz]/thanks"}, "redirectUrl"),
        ({"name": "ok", "allowedOrigins": ["https://example.com/path"]}, "allowedOrigins"),
        ({"name": "ok", "allowedOrigins": ["example.com"]}, "allowedOrigins"),
        ({"name": "ok", "allowedOrigins": ["https://a.example", "ftp://a.example"]},
         "allowedOrigins"),
        ({"name": "ok", "allowedOrigins": ["https://example.com\n"]}, "allowedOrigins"),
        ({"name": "ok", "allowedOrigins": [" https://example.com"]}, "allowedOrigins"),
        ({"name": "ok", "allowedOrigins": ["https://example.com:65536"]}, "allowedOrigins"),
        ({"name": "ok", "allowedOrigins": ["https://user@example.com"]}, "allowedOrigins"),
        ({"name": "ok", "allowedOrigins": ["https://[::1"]}, "allowedOrigins"),
        ({"name": "ok", "allowedOrigins": ["https://[1::2::3]"]}, "allowedOrigins"),
        ({"name": "ok", "allowedOrigins": "https://example.com"}, "allowedOrigins"),
        ({"name": "ok", "rateLimit": 0}, "rateLimit"),
        ({"name": "ok", "rateLimit": 10001}, "rateLimit"),
        ({"name": "ok", "rateLimit": "fast"}, "rateLimit"),
        ({"name": "ok", "rateLimit": True}, "rateLimit"),
        ({"name": "ok", "honeypotField": "x" * 101}, "honeypotField"),
        ({"name": "ok", "colour": "blue"}, "colour"),
    ],
)
def test_create_rejects_bad_values(owner_api, payload, field):
    response = owner_api.post(FORMS, payload, format="json")

    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert field in response.json()["details"]
    assert not Form.objects.exists()


def test_create_requires_json(owner_api):
    assert owner_api.post(FORMS, {"name": "x"}).status_code == 415


def test_create_anonymous_is_401(api):
    assert api.post(FORMS, {"name": "x"}, format="json").status_code == 401


def test_list_is_bare_array_of_own_forms_newest_first(owner_api, other_api):
    owner_api.post(FORMS, {"name": "First"}, format="json")
    owner_api.post(FORMS, {"name": "Second"}, format="json")
    other_api.post(FORMS, {"name": "Not mine"}, format="json")

    response = owner_api.get(FORMS)

    assert response.status_code == 200
    assert [form["name"] for form in response.json()] == ["Second", "First"]


def test_get_one_by_id_or_slug(owner_api, form):
    by_id = owner_api.get(detail(form))
    by_slug = owner_api.get(detail(form.slug))

    assert by_id.status_code == by_slug.status_code == 200
    assert by_id.json() == by_slug.json()


@pytest.mark.parametrize("ident", ["00000000-0000-0000-0000-000000000000", "not-a-form"])
def test_get_missing_is_404(owner_api, ident):
    response = owner_api.get(detail(ident))

    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_other_users_form_is_404_everywhere(other_api, form):
    for method in ("get", "patch", "delete"):
        assert getattr(other_api, method)(detail(form), {}, format="json").status_code == 404
    assert other_api.get(f"{detail(form)}/submissions").status_code == 404
    assert other_api.get(f"{detail(form)}/export?format=csv").status_code == 404
    assert Form.objects.filter(pk=form.pk).exists()


def test_anonymous_is_401_everywhere(api, form):
    assert api.get(detail(form)).status_code == 401
    assert api.patch(detail(form), {}, format="json").status_code == 401
    assert api.delete(detail(form)).status_code == 401


def test_put_is_405(owner_api, form):
    response = owner_api.put(detail(form), {"name": "x"}, format="json")

    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"


def test_patch_updates_only_sent_fields(owner_api, form):
    response = owner_api.patch(
        detail(form), {"rateLimit": 99, "allowedOrigins": ["https://a.example"]}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["rateLimit"] == 99
    assert response.json()["name"] == "Contact"
    form.refresh_from_db()
    assert form.allowed_origins == ["https://a.example"]


def test_patch_ignores_read_only_fields_sent_back(owner_api, form):
    body = owner_api.get(detail(form)).json()
    body["name"] = "Renamed"

    response = owner_api.patch(detail(form), body, format="json")

    assert response.status_code == 200
    assert response.json()["slug"] == form.slug


def test_failed_patch_changes_nothing(owner_api, form):
    response = owner_api.patch(detail(form), {"name": "New", "rateLimit": -1}, format="json")

    assert response.status_code == 400
    form.refresh_from_db()
    assert form.name == "Contact"


@pytest.mark.parametrize("off", [None, ""])
def test_recaptcha_secret_can_be_turned_off(owner_api, form, off):
    owner_api.patch(detail(form), {"recaptchaSecret": "abc"}, format="json")

    response = owner_api.patch(detail(form), {"recaptchaSecret": off}, format="json")

    assert response.json()["recaptchaEnabled"] is False


def test_clearing_redirect_and_honeypot(owner_api, form):
    owner_api.patch(
        detail(form), {"redirectUrl": "https://x.io", "honeypotField": "hp"}, format="json"
    )

    body = owner_api.patch(
        detail(form), {"redirectUrl": None, "honeypotField": ""}, format="json"
    ).json()

    assert body["redirectUrl"] is None
    assert body["honeypotField"] is None


def test_delete_removes_form_submissions_and_endpoint(owner_api, public, form):
    submit(public, form)

    response = owner_api.delete(detail(form))

    assert response.status_code == 204
    assert response.content == b""
    assert owner_api.get(detail(form)).status_code == 404
    assert not Submission.objects.exists()
    assert submit(public, form).status_code == 404


def test_submission_count_is_reported(owner_api, public, form):
    submit(public, form, {"name": "Ada", "n": "1"})
    submit(public, form, {"name": "Ada", "n": "2"})

    assert owner_api.get(detail(form)).json()["submissionCount"] == 2


def test_cookie_authenticated_create_needs_csrf(csrf_api, user):
    from tests.conftest import PASSWORD

    csrf_api.post("/api/auth/login", {"email": user.email, "password": PASSWORD}, format="json")

    response = csrf_api.post(FORMS, {"name": "x"}, format="json")

    assert response.status_code == 403
    assert response.json()["error"] == "csrf_failed"
    assert not Form.objects.exists()
