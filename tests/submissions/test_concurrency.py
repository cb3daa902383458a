"""Limits that must hold across threads and processes, against the real shared services."""

import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections
from django.test import Client

from accounts.models import UsageShard, current_month
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
    UsageShard.objects.create(user=owner, month=current_month(), shard=3, count=7)
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


def _process_burst(slug: str, barrier, first_ip: int, count: int) -> list[int]:
    """One web process: ``count`` threads, released together with the other processes."""
    connections.close_all()

    def one(i: int) -> int:
        try:
            barrier.wait()
            return post_json(slug, f"10.1.{first_ip}.{i + 1}")
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(one, range(count)))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_monthly_limit_is_exact_for_50_requests_over_4_processes():
    owner = make_user(monthly_submission_limit=20)
    UsageShard.objects.create(user=owner, month=current_month(), shard=0, count=5)
    form = form_create(owner=owner, name="Busy", rate_limit=10_000)
    connections.close_all()
    context = multiprocessing.get_context("fork")
    barrier = context.Manager().Barrier(50)
    sizes = [13, 13, 12, 12]  # 50 requests over four processes, released together

    with context.Pool(4) as pool:
        results = pool.starmap(
            _process_burst, [(form.slug, barrier, n, size) for n, size in enumerate(sizes)]
        )

    codes = [code for result in results for code in result]
    assert codes.count(200) == 15
    assert codes.count(403) == 35
    assert Submission.objects.count() == 15
    assert owner.monthly_submission_count == 20
