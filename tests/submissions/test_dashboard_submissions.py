import csv
import io
import json
import re
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection

from core import clock as clock_module
from submissions import folders
from submissions.models import Submission
from tests.conftest import add_submission


def add(form, data, at=None):
    """Store a submission; the next one is stamped at least a millisecond later (SQLite's
    clock has millisecond steps, and rows stamped alike are ordered by their random id)."""
    submission = add_submission(form, data, at=at)
    time.sleep(0.002)
    return submission


@pytest.fixture
def many(form):
    start = clock_module.now() - timedelta(hours=1)
    return [add(form, {"n": str(i)}, at=start + timedelta(seconds=i)) for i in range(25)]


def url(form, suffix=""):
    return f"/api/v1/forms/{form.pk}/submissions{suffix}"


def test_every_page_from_either_end_holds_the_right_rows(owner_api, form):
    # Pages in the older half are found from the oldest end: each page, walked in turn, must
    # still hold the next rows, newest first, and the last page the remainder.
    stored = [add(form, {"n": str(n)}) for n in range(7)]
    newest_first = [str(s.pk) for s in reversed(stored)]

    pages = [owner_api.get(url(form), {"page": page, "limit": 2}).json() for page in (1, 2, 3, 4)]

    assert [[row["id"] for row in body["data"]] for body in pages] == [
        newest_first[0:2], newest_first[2:4], newest_first[4:6], newest_first[6:7]]
    assert {body["total"] for body in pages} == {7}


def test_list_pages_newest_first_with_meta(owner_api, form, many):
    response = owner_api.get(url(form), {"page": 3, "limit": 10})

    assert response.status_code == 200
    body = response.json()
    assert body["page"] == 3
    assert body["limit"] == 10
    assert body["total"] == 25
    assert body["totalPages"] == 3
    assert [row["fields"]["n"] for row in body["data"]] == ["4", "3", "2", "1", "0"]
    first = body["data"][0]
    assert first == {
        "id": str(many[4].pk),
        "formId": str(form.pk),
        "submittedAt": first["submittedAt"],
        "fields": {"n": "4"},
        "meta": {"ip": "203.0.113.5", "userAgent": "UA", "origin": "https://site.example"},
        "status": "inbox",
        "receivedAt": first["submittedAt"],
        "spam": {"score": 0.0, "reasons": [], "details": {}},
    }


def test_list_defaults_to_page_1_of_20(owner_api, form, many):
    body = owner_api.get(url(form)).json()

    assert (body["page"], body["limit"], len(body["data"])) == (1, 20, 20)
    assert body["data"][0]["fields"] == {"n": "24"}


@pytest.mark.parametrize("page", [9, 45796896067897611582963712])
def test_page_past_the_end_is_empty(owner_api, form, many, page):
    response = owner_api.get(url(form), {"page": page, "limit": 50})

    assert response.status_code == 200
    body = response.json()
    assert body["data"] == []
    assert body["total"] == 25


def test_empty_form_has_zero_pages(owner_api, form):
    body = owner_api.get(url(form)).json()

    assert (body["total"], body["totalPages"], body["data"]) == (0, 0, [])


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"page": 0}, "page"),
        ({"page": "x"}, "page"),
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
    ],
)
def test_bad_paging_is_400(owner_api, form, params, field):
    response = owner_api.get(url(form), params)

    assert response.status_code == 400
    assert field in response.json()["details"]


def test_list_anonymous_401_other_user_404(api, other_api, form):
    assert api.get(url(form)).status_code == 401
    assert other_api.get(url(form)).status_code == 404


def test_delete_one_submission(owner_api, form):
    keep, erase = add(form, {"a": "1"}), add(form, {"a": "2"})

    response = owner_api.delete(url(form, f"/{erase.pk}"))

    assert response.status_code == 204
    assert list(Submission.objects.values_list("pk", flat=True)) == [keep.pk]
    assert folders.size(form.pk) == 1


@pytest.mark.parametrize("ident", ["00000000-0000-0000-0000-000000000000", "garbage"])
def test_delete_missing_submission_is_404(owner_api, form, ident):
    assert owner_api.delete(url(form, f"/{ident}")).status_code == 404


def test_delete_other_users_submission_is_404(owner_api, other_api, form, other_user):
    from forms_app.services import form_create

    theirs = add(form_create(owner=other_user, name="Theirs"), {"a": "1"})
    mine = add(form, {"a": "1"})

    assert other_api.delete(url(form, f"/{mine.pk}")).status_code == 404
    assert owner_api.delete(url(form, f"/{theirs.pk}")).status_code == 404
    assert Submission.objects.count() == 2


def read_stream(response) -> str:
    assert response.streaming
    return b"".join(response.streaming_content).decode()


def test_csv_export_orders_rows_and_columns(owner_api, form):
    first = clock_module.now() - timedelta(seconds=1)  # two stamps, never the same millisecond
    add(form, [["name", "Ada"], ["email", "ada@example.com"]], at=first)
    add(form, [["email", "g@example.com"], ["company", "Navy"], ["name", "Grace"]])

    response = owner_api.get(f"/api/v1/forms/{form.pk}/export", {"format": "csv"})

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == f'attachment; filename="{form.slug}-submissions.csv"'
    rows = list(csv.reader(io.StringIO(read_stream(response))))
    assert rows[0] == ["id", "submittedAt", "name", "email", "company"]
    assert rows[1][2:] == ["Ada", "ada@example.com", ""]
    assert rows[2][2:] == ["Grace", "g@example.com", "Navy"]


def add_from_another_connection(form, data) -> None:
    """A writer that is not the export: on PostgreSQL another connection (the export holds
    its own for the COPY); SQLite's shared in-memory test database has one writer at a time,
    so there the same connection writes while the export's statement is open."""
    if connection.vendor != "postgresql":
        add(form, data)
        return

    def write():
        try:
            add(form, data)
        finally:
            connection.close()

    writer = threading.Thread(target=write)
    writer.start()
    writer.join()


@pytest.mark.django_db(transaction=True)
def test_csv_export_leaves_out_rows_arriving_while_it_streams(owner_api, form):
    kept = add(form, [["name", "Ada"]])
    response = owner_api.get(f"/api/v1/forms/{form.pk}/export", {"format": "csv"})
    chunks = iter(response.streaming_content)

    header = next(chunks).decode()  # the export's statement has its snapshot by now
    add_from_another_connection(form, [["name", "Late"], ["phone", "555"]])
    rest = b"".join(chunks).decode()

    rows = list(csv.reader(io.StringIO(header + rest)))
    assert rows[0] == ["id", "submittedAt", "name"]
    assert [row[:1] + row[2:] for row in rows[1:]] == [[str(kept.pk), "Ada"]]


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ('=HYPERLINK("x")', '\'=HYPERLINK("x")'),
        ("+1", "'+1"),
        ("-2", "'-2"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("plain", "plain"),
        (["a", "b"], "a, b"),
        (True, "true"),
        (False, "false"),
        (42, "42"),
        (-1.5, "'-1.5"),
        (None, ""),
        ("", ""),
        ([], ""),
        (["-a", "b"], "'-a, b"),
        (["a", 1], '["a", 1]'),
        ({"a": None, "b": [1, "é"]}, '{"a": null, "b": [1, "é"]}'),
        ('say "hi", then\nleave', 'say "hi", then\nleave'),
    ],
)
def test_csv_cells_are_safe_from_formulas(owner_api, form, value, cell):
    add(form, [["v", value]])

    text = read_stream(owner_api.get(f"/api/v1/forms/{form.pk}/export", {"format": "csv"}))

    assert list(csv.reader(io.StringIO(text)))[1][2] == cell


def test_csv_export_quotes_every_cell(owner_api, form):
    """A spreadsheet splitting on ";" must still see one text, not the formula =1+1."""
    add(form, [["note", "hello;=1+1;"], ["n", 7], ["empty", ""]])
    add(form, [["note", "plain"]])

    text = read_stream(owner_api.get(f"/api/v1/forms/{form.pk}/export", {"format": "csv"}))
    lines = text.splitlines()

    assert lines[0] == '"id","submittedAt","note","n","empty"'
    assert all(re.fullmatch(r'("[^"]*",)*"[^"]*"', line) for line in lines)
    assert lines[1].endswith(',"hello;=1+1;","7",""')
    assert lines[2].endswith(',"plain","",""')


def test_csv_header_names_are_safe_too(owner_api, form):
    add(form, [["=cmd", "x"]])

    text = read_stream(owner_api.get(f"/api/v1/forms/{form.pk}/export", {"format": "csv"}))

    assert next(csv.reader(io.StringIO(text)))[2] == "'=cmd"


def test_json_export_is_pull_shape_oldest_first(owner_api, form):
    first = add(form, [["b", "1"], ["a", "2"]])
    add(form, {"c": "3"})

    response = owner_api.get(f"/api/v1/forms/{form.pk}/export", {"format": "json"})

    assert response["Content-Disposition"] == f'attachment; filename="{form.slug}-submissions.json"'
    rows = json.loads(read_stream(response))
    assert [list(row["fields"]) for row in rows] == [["b", "a"], ["c"]]
    assert rows[0] == {
        "id": str(first.pk),
        "formId": str(form.pk),
        "submittedAt": rows[0]["submittedAt"],
        "fields": {"b": "1", "a": "2"},
    }


def test_json_export_of_empty_form_is_empty_array(owner_api, form):
    response = owner_api.get(f"/api/v1/forms/{form.pk}/export", {"format": "json"})

    assert json.loads(read_stream(response)) == []


@pytest.mark.parametrize("params", [{"format": "xml"}, {}])
def test_export_needs_a_known_format(owner_api, form, params):
    response = owner_api.get(f"/api/v1/forms/{form.pk}/export", params)

    assert response.status_code == 400
    assert "format" in response.json()["details"]


def test_field_order_survives_every_read(owner_api, public, form):
    from tests.conftest import submit

    submit(public, form, {"zulu": "1", "alpha": "2", "mike": "3"})

    listed = owner_api.get(url(form)).json()["data"][0]["fields"]
    exported = json.loads(
        read_stream(owner_api.get(f"/api/v1/forms/{form.pk}/export", {"format": "json"}))
    )
    header = read_stream(
        owner_api.get(f"/api/v1/forms/{form.pk}/export", {"format": "csv"})
    ).splitlines()[0]

    assert list(listed) == ["zulu", "alpha", "mike"]
    assert list(exported[0]["fields"]) == ["zulu", "alpha", "mike"]
    assert header == '"id","submittedAt","zulu","alpha","mike"'
