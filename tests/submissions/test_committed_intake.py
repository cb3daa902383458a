"""The public endpoint as it runs in production: each request commits on its own.

Most tests run inside a transaction, where intake takes its transactional path. With PostgreSQL
and Redis a committed request stores the submission, its deliveries and its monthly count in
one statement; these tests pin that path.
"""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts import quota
from integrations.models import Delivery
from integrations.services import integration_create
from submissions.models import Submission
from tests.conftest import make_user

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def owner():
    return make_user()


@pytest.fixture
def form(owner):
    from forms_app.services import form_create

    return form_create(owner=owner, name="Live", notify_owner=False)


def post(form, data, **extra):
    return Client().post(
        f"/api/v1/f/{form.slug}", data, content_type="application/json", **extra
    )


def statements_of(call):
    with CaptureQueriesContext(connection) as queries:
        response = call()
    assert response.status_code == 200
    return [query["sql"].split()[0] for query in queries.captured_queries]


def test_one_statement_per_submission_once_the_process_keeps_the_form(form, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False  # count the request, not the deliveries
    # The form records a field name the first time only, which makes the copy it kept stale.
    post(form, {"name": "new name"})
    post(form, {"name": "read afresh"})

    reading = statements_of(lambda: post(form, {"name": "read and kept"}))
    kept = statements_of(lambda: post(form, {"name": "Ada"}))

    assert reading == ["SELECT", "SELECT", "WITH"]  # read, tokens taken, read again: kept
    assert kept == ["WITH"]


def test_everything_the_statement_stores(form, owner, settings):
    from forms_app.services import form_create

    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    other_form = form_create(owner=owner, name="Other")
    hook = {"url": "http://127.0.0.1:9/"}
    everywhere = integration_create(owner=owner, type="WEBHOOK", config=hook)
    this_form = integration_create(owner=owner, type="WEBHOOK", config=hook, form_id=str(form.pk))
    integration_create(owner=owner, type="WEBHOOK", config=hook, form_id=str(other_form.pk))
    disabled = integration_create(owner=owner, type="WEBHOOK", config=hook)
    disabled.enabled = False
    disabled.save()

    response = post(
        form,
        {"zeta": "ü ∑", "alpha": ["a", "b"], "n": 3},
        HTTP_USER_AGENT="Agent/1",
        HTTP_ORIGIN="https://site.example",
        REMOTE_ADDR="2001:db8::5",
    )

    assert response.status_code == 200
    submission = Submission.objects.get()
    assert submission.data == [["zeta", "ü ∑"], ["alpha", ["a", "b"]], ["n", 3]]
    assert (submission.ip, submission.user_agent, submission.origin) == (
        "2001:db8::5",
        "Agent/1",
        "https://site.example",
    )
    assert submission.submitted_at is not None
    deliveries = Delivery.objects.filter(submission=submission)
    assert {d.integration_id for d in deliveries} == {everywhere.pk, this_form.pk}
    assert {d.state for d in deliveries} == {"pending"}
    assert quota.used(owner.pk) == 1


def test_a_failed_statement_gives_the_reserved_quota_back(form, owner, monkeypatch):
    from submissions.intake.store import pg

    owner.monthly_submission_limit = 1
    owner.save()

    def broken(*_args, **_kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(pg, "store", broken)
    assert post(form, {"name": "lost"}).status_code == 500
    monkeypatch.undo()

    assert post(form, {"name": "kept"}).status_code == 200
    assert post(form, {"name": "over"}).status_code == 403
    assert Submission.objects.count() == 1


def test_a_rejected_body_gives_the_reserved_quota_back(form, owner):
    owner.monthly_submission_limit = 1
    owner.save()

    assert post(form, "not json").status_code == 400
    assert post(form, {}).status_code == 400

    assert post(form, {"name": "kept"}).status_code == 200
    assert post(form, {"name": "over"}).status_code == 403


def test_the_quota_counter_is_seeded_from_the_record(form, owner):
    from accounts.models import UsageShard, current_month
    from core.infra import redis

    owner.monthly_submission_limit = 3
    owner.save()
    UsageShard.objects.create(user=owner, month=current_month(), shard=5, count=2)
    redis.client().delete(quota.redis_key(owner.pk, current_month()))  # as after a Redis restart

    assert post(form, {"n": "1"}).status_code == 200
    assert post(form, {"n": "2"}).status_code == 403
    assert quota.used(owner.pk) == 3
