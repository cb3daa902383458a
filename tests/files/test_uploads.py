"""Uploads on a form that opts in: stored, refused, counted against the quota."""

from __future__ import annotations

import hashlib

import pytest

from files.models import StorageUsage, StoredFile
from submissions.models import Submission
from tests.files.helpers import HTML, MULTIPART, PDF, PNG, body, post, upload, upload_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def form(user):
    return upload_form(user)


def nothing_stored(store) -> bool:
    return (not Submission.objects.exists() and not StoredFile.objects.exists()
            and store.keys() == [] and not StorageUsage.objects.filter(used__gt=0).exists())


def test_a_file_is_stored_and_listed_with_its_submission(api, owner_api, form, store):
    response = post(api, form, {"name": "Ada", "cv": upload("cv.pdf", PDF, "text/html")})

    assert response.status_code == 200
    listed = owner_api.get(f"/api/v1/forms/{form.pk}/submissions").json()["data"][0]
    assert listed["fields"] == {"name": "Ada", "cv": f"[File: cv.pdf, {len(PDF)} bytes]"}
    (file,) = listed["files"]
    assert {key: file[key] for key in ("field", "name", "size", "contentType", "sha256")} == {
        "field": "cv", "name": "cv.pdf", "size": len(PDF), "contentType": "application/pdf",
        "sha256": hashlib.sha256(PDF).hexdigest()}
    assert file["url"].startswith(f"http://localhost:8000/api/v1/files/{StoredFile.objects.get().pk}?sig=")
    assert len(store.keys()) == 1
    assert StorageUsage.objects.get(owner=form.owner).used == len(PDF)


def test_the_stored_name_is_never_the_clients(api, form, store):
    post(api, form, {"cv": upload("../../etc/passwd.png", PNG)})

    (key,) = store.keys()
    assert "passwd" not in key and ".." not in key
    assert StoredFile.objects.get().name == "passwd.png"


def test_a_file_over_max_bytes_is_413_and_nothing_is_stored(api, form, store):
    response = post(api, form, {"name": "Ada", "a": upload("ok.png", PNG),
                                "cv": upload("big.pdf", PDF + b"x" * 1000)})

    assert response.status_code == 413
    assert response.json()["details"] == {"cv": "is larger than 1000 bytes"}
    assert nothing_stored(store)


def test_a_refused_type_is_415_whatever_the_client_says(api, form, store):
    response = post(api, form, {"photo": upload("me.png", HTML, "image/png")})

    assert response.status_code == 415
    assert response.json() == {
        "success": False, "error": "file_type_not_allowed",
        "message": "This form does not accept this type of file.",
        "details": {"photo": "is text/plain, which this form does not accept"},
        "errors": [
            {"code": "UNSPECIFIED", "message": "This form does not accept this type of file."},
            {"code": "UNSPECIFIED", "field": "photo",
             "message": "Photo is text/plain, which this form does not accept."}]}
    assert nothing_stored(store)


def test_more_files_than_max_files_is_413(api, form, store):
    files = {"a": upload("a.png", PNG), "b": upload("b.png", PNG), "c": upload("c.png", PNG)}
    response = post(api, form, files)

    assert response.status_code == 413
    assert response.json()["details"] == {"c": "is past the 2 files a submission may have"}
    assert nothing_stored(store)


def test_past_the_quota_is_413_and_nothing_is_stored(api, form, store, settings, user):
    settings.DEFAULT_STORAGE_QUOTA_BYTES = len(PNG) + len(PDF) - 1
    response = post(api, form, {"a": upload("a.png", PNG), "b": upload("b.pdf", PDF)})

    assert response.status_code == 413
    assert response.json()["details"] == {"a": "is past the account's storage quota"}
    assert nothing_stored(store)
    user.refresh_from_db()
    assert user.monthly_submission_count == 0  # not counted toward the month either


def test_refused_files_are_not_counted_toward_the_month(api, form, store, user):
    post(api, form, {"photo": upload("me.png", HTML)})
    post(api, form, {"cv": upload("big.pdf", PDF + b"x" * 1000)})

    user.refresh_from_db()
    assert user.monthly_submission_count == 0
    assert post(api, form, {"photo": upload("me.png", PNG)}).status_code == 200
    user.refresh_from_db()
    assert user.monthly_submission_count == 1


def test_an_html_form_post_gets_the_status_as_a_page(api, form, store):
    response = api.post(f"/api/v1/f/{form.slug}", body({"photo": upload("me.png", HTML)}),
                        content_type=MULTIPART, HTTP_ACCEPT="text/html")

    assert response.status_code == 415
    assert response["Content-Type"].startswith("text/html")
    assert nothing_stored(store)


def test_a_honeypot_catch_stores_no_file(api, user, store):
    form = upload_form(user, maxFiles=1)
    form.honeypot_field = "_gotcha"
    form.save()

    response = post(api, form, {"_gotcha": "bot", "photo": upload("me.png", PNG)})

    assert response.status_code == 200
    assert nothing_stored(store)


def test_a_file_named_with_a_script_is_kept_as_text(api, owner_api, form, store):
    post(api, form, {"photo": upload('<img src=x onerror=alert(1)>.png', PNG)})

    listed = owner_api.get(f"/api/v1/forms/{form.pk}/submissions").json()["data"][0]
    assert listed["files"][0]["name"] == "<img src=x onerror=alert(1)>.png"


def test_a_failed_store_leaves_no_file_and_gives_the_quota_back(api, form, store, monkeypatch):
    from submissions.intake import pipeline

    def broken(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(pipeline, "_store", broken)
    assert post(api, form, {"a": upload("a.png", PNG)}).status_code == 500

    assert nothing_stored(store)


def test_a_body_over_the_forms_limit_is_413(api, user, store):
    form = upload_form(user, maxBytes=10, maxFiles=1)
    response = post(api, form, {"a": upload("a.png", PNG), "pad": "x" * (1024 * 1024)})

    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"
    assert nothing_stored(store)


def test_a_form_without_uploads_keeps_no_file_and_no_files_key(api, owner_api, user, store):
    from forms_app.services import form_create

    form = form_create(owner=user, name="Plain", spam_filter=False)
    post(api, form, {"cv": upload("cv.pdf", PDF)})

    listed = owner_api.get(f"/api/v1/forms/{form.pk}/submissions").json()["data"][0]
    assert "files" not in listed
    assert listed["fields"] == {"cv": f"[File: cv.pdf, {len(PDF)} bytes]"}
    assert store.keys() == []
