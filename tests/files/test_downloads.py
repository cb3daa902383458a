"""``GET /api/v1/files/{id}?sig=...``: signed, expiring, an attachment that cannot run."""

from __future__ import annotations

import pytest
from django.test import Client

from files import links
from files.models import StoredFile
from tests.files.helpers import HTML, PDF, post, upload, upload_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def form(user):
    return upload_form(user, types=["application/pdf", "text/plain"])


def stored(public, form, name="cv.pdf", data=PDF) -> StoredFile:
    assert post(public, form, {"cv": upload(name, data)}).status_code == 200
    return StoredFile.objects.get(name=name)


def fetch(path: str):
    return Client().get(path)


def test_a_signed_link_downloads_the_file_as_an_attachment(public, form, store):
    row = stored(public, form)

    response = fetch(links.url(row.pk).removeprefix("http://localhost:8000"))

    assert response.status_code == 200
    assert b"".join(response.streaming_content) == PDF
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == 'attachment; filename="cv.pdf"'
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "default-src 'none'; sandbox"
    assert response["Cache-Control"] == "private, no-store"
    assert response["Content-Length"] == str(len(PDF))
    assert not response.cookies


def test_an_html_page_is_served_as_text_never_html(public, form, store):
    row = stored(public, form, "page.html", HTML)

    response = fetch(f"/api/v1/files/{row.pk}?sig={links.signature(row.pk)}")

    assert response["Content-Type"] == "text/plain"
    assert response["Content-Disposition"].startswith("attachment;")


def test_a_non_ascii_name_is_written_per_rfc_5987(public, form, store):
    row = stored(public, form, "résumé \"final\".pdf")

    response = fetch(f"/api/v1/files/{row.pk}?sig={links.signature(row.pk)}")

    assert response["Content-Disposition"] == (
        "attachment; filename*=utf-8''r%C3%A9sum%C3%A9%20%22final%22.pdf")


def test_an_altered_signature_is_404(public, form, store):
    row = stored(public, form)
    expires, mac = links.signature(row.pk).split(".")
    altered = mac[:-1] + ("0" if mac[-1] != "0" else "1")

    for sig in (f"{expires}.{altered}", f"{int(expires) + 3600}.{mac}", "", "x.y", mac):
        response = fetch(f"/api/v1/files/{row.pk}?sig={sig}")
        assert response.status_code == 404
        assert response.json() == {"error": "not_found",
                                   "message": "The requested resource was not found."}


def test_a_signature_cannot_reach_another_file(public, form, store):
    first = stored(public, form)
    second = stored(public, form, "other.pdf")

    response = fetch(f"/api/v1/files/{second.pk}?sig={links.signature(first.pk)}")

    assert response.status_code == 404


def test_a_link_expires_after_an_hour(public, form, store, clock):
    row = stored(public, form)
    path = f"/api/v1/files/{row.pk}?sig={links.signature(row.pk)}"

    clock.advance(seconds=3599)
    assert fetch(path).status_code == 200
    clock.advance(seconds=2)
    assert fetch(path).status_code == 404


def test_a_link_to_a_deleted_file_is_404(public, owner_api, form, store):
    row = stored(public, form)
    path = f"/api/v1/files/{row.pk}?sig={links.signature(row.pk)}"

    owner_api.delete(f"/api/v1/forms/{form.pk}/submissions/{row.submission_id}")

    assert fetch(path).status_code == 404


def test_only_get_is_allowed(public, form, store):
    row = stored(public, form)

    response = Client().post(f"/api/v1/files/{row.pk}?sig={links.signature(row.pk)}")

    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"


def test_another_owners_submission_and_its_files_are_404(public, other_api, owner_api, form,
                                                         store):
    row = stored(public, form)

    assert other_api.get(f"/api/v1/forms/{form.pk}/submissions").status_code == 404
    assert owner_api.get(f"/api/v1/forms/{form.pk}/submissions").status_code == 200
    assert other_api.delete(
        f"/api/v1/forms/{form.pk}/submissions/{row.submission_id}").status_code == 404
    assert StoredFile.objects.filter(pk=row.pk).exists()
