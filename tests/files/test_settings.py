"""``fileUploads`` on the form object: null by default, strictly checked, and set from the
dashboard's settings too; the account page shows storage used and the quota."""

from __future__ import annotations

import pytest

from forms_app.models import Form
from tests.files.helpers import PDF, post, upload, upload_form

pytestmark = pytest.mark.django_db

GOOD = {"maxBytes": 5 * 1024 * 1024, "maxFiles": 3, "types": ["image/*", "application/pdf"]}


def patch(owner_api, form, value):
    return owner_api.patch(f"/api/v1/forms/{form.pk}", {"fileUploads": value}, format="json")


def test_uploads_are_off_by_default_and_set_by_patch(owner_api, form):
    assert owner_api.get(f"/api/v1/forms/{form.pk}").json()["fileUploads"] is None

    response = patch(owner_api, form, GOOD)

    assert response.status_code == 200
    assert response.json()["fileUploads"] == GOOD
    assert patch(owner_api, form, None).json()["fileUploads"] is None


def test_create_takes_file_uploads(owner_api):
    response = owner_api.post("/api/v1/forms", {"name": "Jobs", "fileUploads": GOOD},
                              format="json")

    assert response.status_code == 201
    assert Form.objects.get().file_uploads == GOOD


@pytest.mark.parametrize(("value", "field"), [
    ({**GOOD, "maxBytes": 0}, "fileUploads.maxBytes"),
    ({**GOOD, "maxBytes": 26_214_401}, "fileUploads.maxBytes"),
    ({**GOOD, "maxBytes": "1000"}, "fileUploads.maxBytes"),
    ({**GOOD, "maxFiles": 0}, "fileUploads.maxFiles"),
    ({**GOOD, "maxFiles": 11}, "fileUploads.maxFiles"),
    ({**GOOD, "maxFiles": True}, "fileUploads.maxFiles"),
    ({**GOOD, "types": []}, "fileUploads.types"),
    ({**GOOD, "types": ["images"]}, "fileUploads.types"),
    ({**GOOD, "types": ["*/*"]}, "fileUploads.types"),
    ({**GOOD, "types": [3]}, "fileUploads.types"),
    ({**GOOD, "types": "image/*"}, "fileUploads.types"),
    ({"maxFiles": 1, "types": ["image/*"]}, "fileUploads.maxBytes"),
    ({**GOOD, "extra": 1}, "fileUploads.extra"),
    ("on", "fileUploads"),
    ([], "fileUploads"),
])
def test_bad_file_uploads_are_400_naming_the_field(owner_api, form, value, field):
    response = patch(owner_api, form, value)

    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert list(response.json()["details"]) == [field]
    assert Form.objects.get().file_uploads is None


def test_the_widest_limits_are_taken(owner_api, form):
    widest = {"maxBytes": 26_214_400, "maxFiles": 10, "types": ["application/pdf"]}

    assert patch(owner_api, form, widest).json()["fileUploads"] == widest


def test_the_dashboard_sets_file_uploads(owner, form):
    response = owner.post(f"/dashboard/forms/{form.pk}/settings", {
        "name": "Contact", "rateLimit": "10", "spamFilter": "on", "fileUploads": "on",
        "maxMegabytes": "1", "maxFiles": "2", "uploadTypes": "image/*\napplication/pdf\n"})

    assert response.status_code == 302
    form.refresh_from_db()
    assert form.file_uploads == {"maxBytes": 1048576, "maxFiles": 2,
                                 "types": ["image/*", "application/pdf"]}
    html = owner.get(f"/dashboard/forms/{form.pk}/settings").content.decode()
    assert 'name="fileUploads" id="fileUploads" checked' in html
    assert 'name="maxMegabytes" value="1"' in html


def test_the_dashboard_refuses_bad_limits(owner, form):
    owner.post(f"/dashboard/forms/{form.pk}/settings", {
        "name": "Contact", "rateLimit": "10", "fileUploads": "on", "maxMegabytes": "0",
        "maxFiles": "2", "uploadTypes": "image/*"}, follow=True)

    form.refresh_from_db()
    assert form.file_uploads is None


def test_the_dashboard_turns_uploads_off(owner, user):
    form = upload_form(user)

    owner.post(f"/dashboard/forms/{form.pk}/settings", {"name": "Jobs", "rateLimit": "10"})

    form.refresh_from_db()
    assert form.file_uploads is None


def test_the_account_page_shows_storage_used_and_the_quota(owner, user, public, store,
                                                           settings):
    settings.DEFAULT_STORAGE_QUOTA_BYTES = 2 * 1024 * 1024
    post(public, upload_form(user), {"cv": upload("cv.pdf", PDF)})

    html = owner.get("/dashboard/account").content.decode()

    assert f"{len(PDF)}\xa0bytes of 2.0\xa0MB used by uploaded files." in html
    assert "2097152" not in html  # each size once, in words


def test_the_submission_page_lists_files_with_a_download_link(owner, user, public, store):
    from files.models import StoredFile

    form = upload_form(user)
    post(public, form, {"cv": upload("cv.pdf", PDF)})
    row = StoredFile.objects.get()

    html = owner.get(f"/dashboard/forms/{form.pk}/submissions/{row.submission_id}").content
    html = html.decode()

    assert '<td data-label="Name">cv.<wbr>pdf</td>' in html
    assert '<td data-label="Type">application/<wbr>pdf</td>' in html
    assert f'<td data-label="Size">{len(PDF)}\xa0bytes</td>' in html  # once, not twice
    assert f'href="http://localhost:8000/api/v1/files/{row.pk}?sig=' in html


def test_another_owners_submission_page_is_404(owner, other_user, public, store):
    from files.models import StoredFile

    form = upload_form(other_user)
    post(public, form, {"cv": upload("cv.pdf", PDF)})
    row = StoredFile.objects.get()

    response = owner.get(f"/dashboard/forms/{form.pk}/submissions/{row.submission_id}")

    assert response.status_code == 404
