"""Pull API properties that only the production services can show."""

import multiprocessing
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, connections
from django.test import Client

from forms_app.services import form_create
from pullapi.cursors import Position
from pullapi.selectors import submissions_page
from submissions import feed
from submissions.models import Submission
from tests.conftest import create_key, make_user

BASE = datetime(2026, 1, 1, tzinfo=UTC)


def bulk(form, count):
    Submission.objects.bulk_create(
        [
            Submission(form=form, submitted_at=BASE + timedelta(seconds=i), data=[["n", i]])
            for i in range(count)
        ],
        batch_size=5000,
    )


@pytest.mark.postgres
@pytest.mark.parametrize("order", ["desc", "asc"])
def test_deep_cursor_page_is_an_index_range_scan(user, order):
    busy, other = form_create(owner=user, name="Busy"), form_create(owner=user, name="Other")
    bulk(busy, 30_000)
    bulk(other, 30_000)
    feed.step(batch=60_000)  # every row placed in the feed, as readers and beat do
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE submissions_submission")
    deep = Position(BASE + timedelta(seconds=15_000), 0)
    rows = Submission.inbox.filter(form=busy, position__isnull=False)

    from submissions.keyset import past

    ordering = ["submitted_at", "position"] if order == "asc" else ["-submitted_at", "-position"]
    query = rows.filter(past(deep.submitted_at, deep.position, order))
    query = query.order_by(*ordering)[:101]
    plan = query.explain()

    assert "Seq Scan" not in plan
    assert "submission_feed" in plan
    page = submissions_page(busy.pk, order=order, limit=100, after=deep)
    assert len(page.rows) == 100 and page.has_more


def _pull(key: str, slug: str, count: int) -> list[int]:
    client = Client()
    codes = [
        client.get(
            "/api/v1/submissions", {"formId": slug}, HTTP_AUTHORIZATION=f"Bearer {key}"
        ).status_code
        for _ in range(count)
    ]
    connections.close_all()
    return codes


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_two_processes_sharing_a_key_get_exactly_60_a_minute():
    owner = make_user()
    form = form_create(owner=owner, name="Synced")
    key = create_key(owner, [form])
    connections.close_all()

    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.starmap(_pull, [(key, form.slug, 40), (key, form.slug, 40)])

    codes = [code for result in results for code in result]
    assert codes.count(200) == 60
    assert codes.count(429) == 20
