"""Search on a form's page: text anywhere in the values, a range of days, and an export of
what matches. Runs on both databases: PostgreSQL's trigram index, SQLite's FTS5 table."""

import csv
import io
import json
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from submissions import selectors
from submissions.models import Submission
from submissions.services import submission_delete
from tests.conftest import add_submission


def on(day: int) -> datetime:
    return datetime(2026, 11, day, 12, 0, tzinfo=UTC)


@pytest.fixture
def stored(form):
    return {
        "ada": add_submission(form, {"email": "Ada@Example.com", "message": "Hello",
                                     "via": "web form"}, at=on(2)),
        "grace": add_submission(form, {"email": "grace@navy.mil", "message": "100% sure",
                                       "via": "web form"}, at=on(5)),
        "linus": add_submission(form, {"email": "linus@kernel.org", "topic": "snake_case",
                                       "via": "web form"}, at=on(9)),
    }


def page(owner, form, **query):
    response = owner.get(reverse("dashboard:form", args=[form.pk]), query)
    assert response.status_code == 200
    return response.content.decode()


def found(owner, form, **query) -> set[str]:
    text = page(owner, form, **query)
    return {name for name in ("Ada@Example.com", "grace@navy.mil", "linus@kernel.org")
            if name in text}


def test_text_anywhere_in_the_values_in_any_case(owner, form, stored):
    assert found(owner, form, q="ada@EX") == {"Ada@Example.com"}
    assert found(owner, form, q="ELLO") == {"Ada@Example.com"}
    assert found(owner, form, q=".org") == {"linus@kernel.org"}


def test_text_has_three_characters_at_least(owner, form, stored):
    """Shorter text has no trigram for an index to look up: it would read every row."""
    text = page(owner, form, q=" mi ")

    assert "Search for 3 characters or more." in text
    assert found(owner, form, q=" mi ") == {"Ada@Example.com", "grace@navy.mil",
                                            "linus@kernel.org"}  # the folder, unsearched
    assert found(owner, form, q="mil") == {"grace@navy.mil"}


def test_field_names_are_not_searched(owner, form, stored):
    assert found(owner, form, q="topic") == set()
    assert "Nothing in the inbox matches." in page(owner, form, q="topic")


def test_wildcards_and_quotes_are_taken_literally(owner, form, stored):
    assert found(owner, form, q="100%") == {"grace@navy.mil"}
    assert found(owner, form, q="0% s") == {"grace@navy.mil"}
    assert found(owner, form, q="e_c") == {"linus@kernel.org"}
    assert found(owner, form, q="e%c") == set()
    assert found(owner, form, q='"ada"') == set()


def test_a_range_of_days_includes_both_ends(owner, form, stored):
    assert found(owner, form, first_day="2026-11-05") == {"grace@navy.mil", "linus@kernel.org"}
    assert found(owner, form, last_day="2026-11-05") == {"Ada@Example.com", "grace@navy.mil"}
    assert found(owner, form, q="e.c", first_day="2026-11-03", last_day="2026-11-08") == set()
    assert found(owner, form, q=".or", first_day="2026-11-03", last_day="2026-11-09") == {
        "linus@kernel.org"}


def test_a_range_that_ends_before_it_starts_is_refused(owner, form, stored):
    text = page(owner, form, first_day="2026-11-09", last_day="2026-11-02")

    assert "The last day comes before the first." in text
    assert "grace@navy.mil" in text  # the folder as it is, unsearched


@pytest.mark.parametrize("query", [
    {"q": "a\x00b"},
    {"q": "x" * 201},
    {"first_day": "0001-01-01", "last_day": "9999-12-31"},
    {"first_day": "2026-02-30"},
    {"last_day": "yesterday"},
])
def test_odd_input_is_answered_never_a_500(owner, form, stored, query):
    page(owner, form, **query)
    response = owner.get(reverse("dashboard:form-export", args=[form.pk]),
                         {"format": "csv", **query})
    assert response.status_code == 200
    b"".join(response.streaming_content)


def test_the_spam_folder_is_searched_on_its_own(owner, form, stored):
    Submission.objects.filter(pk=stored["grace"].pk).update(status="spam")

    assert found(owner, form, q="mil") == set()
    assert found(owner, form, q="mil", folder="spam") == {"grace@navy.mil"}


def test_a_deleted_submission_is_not_found(owner, form, stored):
    submission_delete(submission=stored["ada"])

    assert found(owner, form, q="ada") == set()


def test_a_submission_stored_later_is_found(owner, form, stored):
    add_submission(form, {"email": "new@later.example"})

    assert "new@later.example" in page(owner, form, q="LATER")


def test_pages_and_folders_keep_the_search(owner, form, stored, monkeypatch):
    from dashboard.views import form_sections

    monkeypatch.setattr(form_sections, "PAGE_SIZE", 1)
    text = page(owner, form, q="form", first_day="2026-11-01")

    assert "page=2&amp;q=form&amp;first_day=2026-11-01" in text
    assert "3 submissions match." in text


def test_more_matches_than_are_counted_says_so(owner, form, stored, monkeypatch):
    monkeypatch.setattr(selectors, "SEARCH_LIMIT", 2)

    text = page(owner, form, q="form")

    assert "More than 2 submissions match: showing the newest 2." in text
    assert "linus@kernel.org" in text and "grace@navy.mil" in text
    assert "Ada@Example.com" not in text


def export(owner, form, kind, **query):
    url = reverse("dashboard:form-export", args=[form.pk])
    response = owner.get(url, {"format": kind, **query})
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()


def test_the_export_holds_what_the_search_matches(owner, form, stored):
    text = export(owner, form, "csv", q="WEB", last_day="2026-11-05")
    rows = list(csv.DictReader(io.StringIO(text)))
    records = json.loads(export(owner, form, "json", q="KERNEL"))

    assert [row["email"] for row in rows] == ["Ada@Example.com", "grace@navy.mil"]
    assert [record["fields"]["email"] for record in records] == ["linus@kernel.org"]


def test_the_export_without_a_search_is_the_whole_inbox(owner, form, stored):
    rows = list(csv.DictReader(io.StringIO(export(owner, form, "csv"))))

    assert len(rows) == 3


def test_another_owners_export_is_404(owner, db):
    from forms_app.services import form_create
    from tests.conftest import make_user

    theirs = form_create(owner=make_user("them@example.com"), name="Theirs")

    response = owner.get(reverse("dashboard:form-export", args=[theirs.pk]), {"format": "csv"})

    assert response.status_code == 404


def test_the_dashboards_csv_opens_in_excel_with_its_accents(owner, form, stored):
    """Excel reads a CSV without a byte order mark in the system's code page."""
    response = owner.get(reverse("dashboard:form-export", args=[form.pk]), {"format": "csv"})
    body = b"".join(response.streaming_content)

    assert body.startswith(b"\xef\xbb\xbf\"id\",\"submittedAt\"")
    assert body.count(b"\xef\xbb\xbf") == 1


def test_the_apis_csv_stays_plain_utf8_for_programs(owner_api, form, stored):
    body = b"".join(owner_api.get(f"/api/v1/forms/{form.pk}/export?format=csv")
                    .streaming_content)

    assert body.startswith(b"\"id\",\"submittedAt\"")
