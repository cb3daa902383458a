"""The submission's JSON shape is written twice: in Python (submissions/representation.py's
``submission_json``) and, on PostgreSQL, in SQL (submissions/export/pg.py's ``ROW_AS_JSON``,
which the pull API's pages, its stream and the JSON export use there). These tests hold the
two equal over values that could tell them apart, on both databases: on SQLite every path is
Python and the stored values must come back as sent; on PostgreSQL the list, the stream and the
export are SQL and must give what the single read (always Python) gives.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection

from files.models import StoredFile
from forms_app.services import form_create
from pullapi.pages import orm, pg
from submissions import feed
from submissions.export.pg import Postgres
from submissions.export.portable import Portable
from submissions.models import Submission
from tests.conftest import CommitClient, create_key

pytestmark = pytest.mark.django_db

TRICKY: list[list[Any]] = [
    ["integer", 42],
    ["negative", -7],
    ["float", 3.25],
    ["whole float", 2.0],
    ["tiny", 1e-7],
    ["huge", 12345678901234567890],
    ["yes", True],
    ["no", False],
    ["nothing", None],
    ["nested", {"zeta": [1, {"c": None, "a": "x"}], "alpha": {"deep": ["y", 2.5, False]}}],
    ["list", ["one", 2, None, [], {}]],
    ["unicode", "Grüße, 東京, שלום, 🙂, e\u0301, \u2028 and \u2029"],
    ["empty", ""],
    ["long", "ab" * 60_000],
    ["a.b.c", "a name with dots"],
    ['say "hi"', "a name with double quotes"],
    ["it's", "a name with a single quote"],
    ["back\\slash", "a \\n that is no newline, a \"quote\", a tab\tand a newline\n"],
    ["Name", "Ada"],
]
# Asked for by ``fields``: names with dots and quotes, and one the rows do not hold.
ONLY = ["a.b.c", 'say "hi"', "it's", "nested", "absent"]
SUBMITTED_AT = datetime(2026, 3, 4, 5, 6, 7, 999_999, tzinfo=UTC)  # milliseconds cut, not rounded


def ordered(text: str) -> Any:
    """Parsed JSON with every object's keys in their written order."""
    return json.loads(text, object_pairs_hook=lambda pairs: ("object", pairs))


@pytest.fixture
def shapes_form(user, clock):
    """A form that keeps uploads, with a row of tricky values (and a file) and a row with no
    fields, both placed in the feed. The clock stands still, so signed file links match."""
    form = form_create(owner=user, name="Shapes", file_uploads={
        "maxBytes": 1000, "maxFiles": 2, "types": ["application/pdf"]})
    tricky = Submission.objects.create(form=form, data=TRICKY, submitted_at=SUBMITTED_AT)
    Submission.objects.create(form=form, data=[], submitted_at=SUBMITTED_AT.replace(second=8))
    StoredFile.objects.create(owner=user, form_id=form.pk, submission_id=tricky.pk, field="cv",
                              name='cv "final".pdf', size=210, content_type="application/pdf",
                              sha256="0" * 64, key="k")
    feed.catch_up()
    return form


@pytest.fixture
def reader(user, shapes_form) -> CommitClient:
    """A pull API client (a client of its own: the owner's is signed in otherwise)."""
    client = CommitClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {create_key(user, [shapes_form])}")
    return client


def fields_query(only: list[str] | None) -> dict[str, str]:
    return {} if only is None else {"fields": ",".join(only)}


def single_reads(reader, only: list[str] | None) -> list[Any]:
    """Each row as the single read gives it: Python's shape, on both databases."""
    bodies = []
    for row in Submission.objects.order_by("submitted_at"):
        response = reader.get(f"/api/v1/submissions/{row.pk}", fields_query(only))
        assert response.status_code == 200, response.content
        bodies.append(ordered(response.content)[1][0][1])  # {"data": body}
    return bodies


def listed(reader, form, only: list[str] | None) -> list[Any]:
    response = reader.get("/api/v1/submissions", {"formId": form.slug, "order": "asc",
                                                  **fields_query(only)})
    assert response.status_code == 200, response.content
    return ordered(response.content)[1][0][1]


def streamed(reader, form, only: list[str] | None) -> list[Any]:
    response = reader.get("/api/v1/submissions/stream", {"formId": form.slug,
                                                         **fields_query(only)})
    assert response.status_code == 200
    return [ordered(line) for line in b"".join(response.streaming_content).splitlines()]


def exported(owner_api, form) -> list[Any]:
    response = owner_api.get(f"/api/v1/forms/{form.pk}/export?format=json")
    assert response.status_code == 200
    return ordered(b"".join(response.streaming_content))


def plain(value: Any) -> Any:
    """An ``ordered`` value back as Python reads JSON: dicts, lists and scalars."""
    if isinstance(value, tuple):
        return {key: plain(item) for key, item in value[1]}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def fields_of(body: Any) -> Any:
    (_, pairs) = body
    return dict(pairs)["fields"]


@pytest.mark.parametrize("only", [None, ONLY, ["absent"]], ids=["all", "some", "none"])
def test_the_list_and_the_stream_give_the_single_reads_shape(reader, shapes_form, only):
    expected = single_reads(reader, only)

    assert listed(reader, shapes_form, only) == expected
    assert streamed(reader, shapes_form, only) == expected


def test_the_json_export_gives_the_single_reads_shape(reader, owner_api, shapes_form):
    assert exported(owner_api, shapes_form) == single_reads(reader, None)


def test_the_shape_holds_every_value_as_sent(reader):
    """Values compared as Python reads them: PostgreSQL's jsonb keeps the keys of an object
    inside a value in an order of its own, on every path alike."""
    tricky, empty = single_reads(reader, None)
    (_, pairs) = tricky

    assert [key for key, _ in pairs] == ["id", "formId", "submittedAt", "fields", "files"]
    assert dict(pairs)["submittedAt"] == "2026-03-04T05:06:07.999Z"
    assert [name for name, _ in fields_of(tricky)[1]] == [name for name, _ in TRICKY]
    assert plain(fields_of(tricky)) == dict(TRICKY)
    assert fields_of(empty) == ("object", [])


def test_the_fields_filter_keeps_the_stored_order_and_skips_unknown_names(reader):
    tricky, empty = single_reads(reader, ONLY)

    names = [name for name, _ in fields_of(tricky)[1]]
    assert names == ["nested", "a.b.c", 'say "hi"', "it's"]
    assert fields_of(empty) == ("object", [])


@pytest.mark.postgres
@pytest.mark.parametrize("only", [None, set(ONLY)], ids=["all", "some"])
def test_both_page_implementations_give_the_same_rows(shapes_form, only):
    """The pull API picks one by the database (pullapi/pages/backends.py); on PostgreSQL both
    can run against the same rows."""
    assert connection.vendor == "postgresql"
    pages = [pick(shapes_form.pk, "asc", 10, None, None, only)
             for pick in (pg.page, orm.page)]

    sql, python = ([ordered(text) for text in page.rows] for page in pages)
    assert sql == python
    assert pages[0].last == pages[1].last


@pytest.mark.postgres
@pytest.mark.parametrize("only", [None, set(ONLY)], ids=["all", "some"])
def test_both_export_implementations_give_the_same_rows(shapes_form, only):
    """The exports and the stream pick one by the database (submissions/export/backends.py);
    on PostgreSQL both can run against the same rows."""
    assert connection.vendor == "postgresql"
    texts = [[text for batch in rows.json_texts(shapes_form.pk, placed=True, only=only,
                                                with_files=True) for text in batch]
             for rows in (Postgres(), Portable())]

    sql, python = ([ordered(text) for text in found] for found in texts)
    assert sql == python
    assert len(sql) == 2
