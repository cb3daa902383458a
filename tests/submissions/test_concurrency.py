"""Limits that must hold across threads and processes, against the real shared services."""

import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections
from django.test import Client

from accounts.models import User
from forms_app.services import form_create
from submissions.models import Submission
from tests.conftest import make_user


def post_json(slug: str, ip: str) -> int:
    response = Client().post(
        f"/api/v1/f/{slug}", {"name": "x"}, content_type="application/json", REMOTE_ADDR=ip
    )
    return response.status_code


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_submissions_never_exceed_monthly_limit():
    owner = make_user(monthly_submission_limit=10)
    User.objects.filter(pk=owner.pk).update(usage_count=7)
    form = form_create(owner=owner, name="Busy", rate_limit=10_000)
    start = threading.Barrier(50)

    def one(i: int) -> int:
        try:
            start.wait()
            return post_json(form.slug, f"10.0.0.{i + 1}")
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=50) as pool:
        codes = list(pool.map(one, range(50)))

    assert codes.count(200) == 3
    assert codes.count(403) == 47
    assert Submission.objects.count() == 3
    owner.refresh_from_db()
    assert owner.monthly_submission_count == 10


def _burst(slug: str, count: int) -> list[int]:
    codes = [post_json(slug, "198.51.100.7") for _ in range(count)]
    connections.close_all()
    return codes


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_rate_limit_holds_across_two_processes():
    form = form_create(owner=make_user(), name="Shared", rate_limit=10)
    connections.close_all()  # each child opens its own connection

    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.starmap(_burst, [(form.slug, 10), (form.slug, 10)])

    codes = [code for result in results for code in result]
    assert codes.count(200) == 10
    assert codes.count(429) == 10
    assert Submission.objects.count() == 10
