"""A form keeps at most 500 distinct field names (contract, "Input limits")."""

import threading

import pytest
from django.db import connection

from forms_app.models import Form
from submissions.field_names import MAX_FIELD_NAMES
from submissions.models import Submission
from tests.conftest import submit


@pytest.fixture
def busy_form(form):
    form.rate_limit = 10_000
    form.save()
    return form


def names(start: int, count: int) -> dict[str, str]:
    return {f"field{n}": "x" for n in range(start, start + count)}


def fill(public, form, total: int = MAX_FIELD_NAMES) -> None:
    for start in range(0, total, 200):
        response = submit(public, form, names(start, min(200, total - start)))
        assert response.status_code == 200


def test_the_form_records_names_in_order_of_first_appearance(public, busy_form):
    submit(public, busy_form, {"b": "1", "a": "2"})
    submit(public, busy_form, {"a": "3", "c": "4"})

    busy_form.refresh_from_db()
    assert busy_form.field_names == ["b", "a", "c"]


def test_known_names_are_taken_at_the_limit(public, busy_form):
    fill(public, busy_form)

    response = submit(public, busy_form, {"field0": "again", "field499": "and again"})

    assert response.status_code == 200


def test_a_new_name_past_the_limit_is_refused_and_stores_nothing(public, busy_form):
    fill(public, busy_form)
    stored = Submission.objects.count()

    response = submit(public, busy_form, {"field0": "known", "brand new": "x"})

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_submission"
    assert set(body["details"]) == {"brand new"}
    assert Submission.objects.count() == stored
    busy_form.refresh_from_db()
    assert len(busy_form.field_names) == MAX_FIELD_NAMES


def test_one_submission_cannot_cross_the_limit_part_way(public, busy_form):
    fill(public, busy_form, total=MAX_FIELD_NAMES - 1)

    response = submit(public, busy_form, {"new one": "x", "new two": "y"})

    assert response.status_code == 400
    busy_form.refresh_from_db()
    assert len(busy_form.field_names) == MAX_FIELD_NAMES - 1


def test_the_limit_is_per_form(public, busy_form, user):
    from forms_app.services import form_create

    fill(public, busy_form)
    other = form_create(owner=user, name="Other")

    assert submit(public, other, {"brand new": "x"}).status_code == 200


def test_a_refused_submission_gives_its_quota_back(public, busy_form, user):
    fill(public, busy_form)
    used = user.monthly_submission_count

    submit(public, busy_form, {"brand new": "x"})

    assert user.monthly_submission_count == used


def test_existing_forms_are_backfilled_from_their_submissions(busy_form):
    import importlib

    from django.apps import apps

    from tests.conftest import add_submission

    add_submission(busy_form, {"b": "1", "a": "2"})
    add_submission(busy_form, {"c": "3", "b": "4"})
    Form.objects.filter(pk=busy_form.pk).update(field_names=[])
    migration = importlib.import_module("forms_app.migrations.0004_backfill_field_names")

    migration.backfill(apps, None)

    busy_form.refresh_from_db()
    assert busy_form.field_names == ["b", "a", "c"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_new_names_never_pass_the_limit(busy_form):
    from tests.conftest import CommitClient

    Form.objects.filter(pk=busy_form.pk).update(
        field_names=[f"field{n}" for n in range(MAX_FIELD_NAMES - 5)]
    )
    statuses: list[int] = []

    def one(n: int) -> None:
        try:
            response = submit(CommitClient(), busy_form, {f"new{n}": "x"})
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    busy_form.refresh_from_db()
    assert sorted(statuses) == [200] * 5 + [400] * 7
    assert len(busy_form.field_names) == MAX_FIELD_NAMES
    assert Submission.objects.count() == 5
