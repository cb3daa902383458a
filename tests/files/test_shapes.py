"""``files`` in every shape of a submission whose form keeps uploads, and in no shape of a
form that never did."""

from __future__ import annotations

import csv
import hashlib
import io
import json

import pytest

from files.models import StoredFile
from forms_app.services import form_update
from integrations.kinds.google_sheets import sheet_row
from integrations.services import integration_create
from integrations.sheet_columns import Columns
from submissions.models import Submission
from tests.conftest import create_key
from tests.files.helpers import PDF, PNG, post, upload, upload_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def form(user):
    return upload_form(user)


@pytest.fixture
def sent(public, form, store):
    response = post(public, form, {"name": "Ada", "cv": upload("cv.pdf", PDF),
                                   "photo": upload("me.png", PNG)})
    assert response.status_code == 200, response.content
    return Submission.objects.get()


def expected_files(listed: list[dict]) -> list[dict]:
    rows = {row.name: row for row in StoredFile.objects.all()}
    assert [item["name"] for item in listed] == ["cv.pdf", "me.png"]
    for item in listed:
        row = rows[item["name"]]
        assert item["url"].startswith(f"http://localhost:8000/api/v1/files/{row.pk}?sig=")
    return [
        {"field": "cv", "name": "cv.pdf", "size": len(PDF), "contentType": "application/pdf",
         "sha256": hashlib.sha256(PDF).hexdigest(), "url": listed[0]["url"]},
        {"field": "photo", "name": "me.png", "size": len(PNG), "contentType": "image/png",
         "sha256": hashlib.sha256(PNG).hexdigest(), "url": listed[1]["url"]},
    ]


def puller_for(api, user, form):
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {create_key(user, [form])}")
    return api


def test_the_pull_list_and_single_carry_files(api, user, form, sent):
    puller = puller_for(api, user, form)

    listed = puller.get(f"/api/v1/submissions?formId={form.slug}").json()["data"][0]
    single = puller.get(f"/api/v1/submissions/{sent.pk}").json()["data"]

    assert list(listed) == ["id", "formId", "submittedAt", "fields", "files"]
    assert listed["fields"] == {"name": "Ada", "cv": f"[File: cv.pdf, {len(PDF)} bytes]",
                                "photo": f"[File: me.png, {len(PNG)} bytes]"}
    assert listed["files"] == expected_files(listed["files"])
    assert single["files"] == expected_files(single["files"])


def test_the_stream_carries_files(api, user, form, sent):
    puller = puller_for(api, user, form)

    response = puller.get(f"/api/v1/submissions/stream?formId={form.pk}")
    (line,) = b"".join(response.streaming_content).decode().splitlines()

    assert json.loads(line)["files"] == expected_files(json.loads(line)["files"])


def test_the_json_export_carries_files(owner_api, form, sent):
    response = owner_api.get(f"/api/v1/forms/{form.pk}/export?format=json")
    (row,) = json.loads(b"".join(response.streaming_content))

    assert row["files"] == expected_files(row["files"])


def test_the_csv_export_ends_each_row_with_its_links(owner_api, form, sent):
    response = owner_api.get(f"/api/v1/forms/{form.pk}/export?format=csv")
    header, row = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))

    assert header == ["id", "submittedAt", "name", "cv", "photo", "files"]
    links = row[-1].split("\n")
    assert len(links) == 2
    assert all(link.startswith("http://localhost:8000/api/v1/files/") for link in links)
    assert row[3] == f"[File: cv.pdf, {len(PDF)} bytes]"


def test_a_field_named_files_keeps_its_column_and_the_links_column_gives_way(
    owner_api, public, form, store
):
    """The contract names the CSV's columns after the fields; the links column is ours, so it
    takes the first of files_1, files_2... that no field holds."""
    post(public, form, {"files": "my own value", "files_1": "another",
                        "cv": upload("cv.pdf", PDF)})

    response = owner_api.get(f"/api/v1/forms/{form.pk}/export?format=csv")
    header, row = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))

    assert header == ["id", "submittedAt", "files", "files_1", "cv", "files_2"]
    assert row[2:5] == ["my own value", "another", f"[File: cv.pdf, {len(PDF)} bytes]"]
    assert row[5].startswith("http://localhost:8000/api/v1/files/")


def test_the_webhook_event_carries_files(public, form, store, hook, receiver):
    post(public, form, {"cv": upload("cv.pdf", PDF), "photo": upload("me.png", PNG)})

    (request,) = receiver.requests
    data = request.json()["data"]
    assert data["files"] == expected_files(data["files"])


def test_a_webhook_of_an_upload_form_lists_files_before_any_was_stored(public, form, store,
                                                                        hook, receiver):
    """The worker reads a batch's forms with its rows: uploads on is enough for ``files``,
    as in every other shape, even before the form's first file."""
    post(public, form, {"name": "Ada"})

    (request,) = receiver.requests
    assert request.json()["data"]["files"] == []


def test_a_webhook_of_a_form_that_never_took_files_has_no_files_key(public, user, hook,
                                                                     receiver):
    from forms_app.services import form_create

    plain = form_create(owner=user, name="Plain", notify_owner=False)
    post(public, plain, {"name": "Ada"})

    (request,) = receiver.requests
    assert "files" not in request.json()["data"]


@pytest.mark.parametrize("kind", ["SLACK", "DISCORD"])
def test_chat_messages_link_each_file(public, user, form, store, receiver, kind):
    integration_create(owner=user, type=kind, config={"webhookUrl": f"{receiver.url}/chat"})

    post(public, form, {"cv": upload("cv.pdf", PDF)})

    text = json.dumps(receiver.requests[0].json())
    row = StoredFile.objects.get()
    assert f"http://localhost:8000/api/v1/files/{row.pk}?sig=" in text
    assert "cv.pdf" in text


def test_a_sheets_row_holds_the_links(form, sent):
    from integrations.events import submission_event

    event = submission_event(Submission.objects.select_related("form").get())
    columns = Columns(["submittedAt", "id", "name", "cv", "photo", "files"], 6, links=5)

    row = sheet_row(columns, event)

    assert row[2:5] == ["Ada", f"[File: cv.pdf, {len(PDF)} bytes]",
                        f"[File: me.png, {len(PNG)} bytes]"]
    assert row[5].count("http://localhost:8000/api/v1/files/") == 2


def test_files_stay_listed_after_uploads_are_turned_off(owner_api, form, sent):
    form_update(form=form, file_uploads=None)

    listed = owner_api.get(f"/api/v1/forms/{form.pk}/submissions").json()["data"][0]

    assert len(listed["files"]) == 2


def test_a_submission_without_files_of_an_upload_form_has_an_empty_list(public, owner_api,
                                                                        form, store):
    post(public, form, {"name": "Ada"})

    listed = owner_api.get(f"/api/v1/forms/{form.pk}/submissions").json()["data"][0]

    assert listed["files"] == []


def test_a_form_that_never_took_files_keeps_its_shapes(api, user, public, store):
    from forms_app.services import form_create

    plain = form_create(owner=user, name="Plain", spam_filter=False)
    post(public, plain, {"name": "Ada", "cv": upload("cv.pdf", PDF)})
    puller = puller_for(api, user, plain)

    listed = puller.get(f"/api/v1/submissions?formId={plain.slug}").json()["data"][0]
    exported = b"".join(puller.get(f"/api/v1/submissions/stream?formId={plain.pk}")
                        .streaming_content)

    assert list(listed) == ["id", "formId", "submittedAt", "fields"]
    assert "files" not in json.loads(exported)
