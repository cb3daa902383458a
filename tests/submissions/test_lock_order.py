"""One lock order everywhere (docs/exactness.md, "Lock order"): a submission stored in one
statement holds a monthly usage shard and checks its foreign key to the form; a "Not spam"
rescue holds the form's row (its field names) and then counts on a shard. Neither may wait
for the other, so PostgreSQL never has a deadlock to break, and the public POST never gets
the 503 that breaking it gave."""

import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
from django.db import connection, transaction
from django.test import Client

from accounts import quota
from accounts.models import current_month
from forms_app.models import Form
from submissions import field_names
from submissions.models import Status, Submission
from submissions.services import submission_rescue

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def one_shard(monkeypatch):
    """Every count lands on the same usage shard, as two of them do by chance."""
    monkeypatch.setattr(quota, "random", SimpleNamespace(randrange=lambda n: 0))


@pytest.fixture
def form(form):
    Form.objects.filter(pk=form.pk).update(field_names=["name", "n"], rate_limit=10_000)
    return Form.objects.get(pk=form.pk)


def post(slug: str, data: dict, address: str = "203.0.113.7"):
    try:
        return Client(REMOTE_ADDR=address).post(
            f"/api/v1/f/{slug}", data, content_type="application/json"
        )
    finally:
        connection.close()


def test_a_submission_and_a_rescue_holding_the_form_do_not_deadlock(form, user, one_shard):
    """The issue's interleaving, step by step: the rescue holds the form's row; a submission
    counts on the shard and checks the form; the rescue then counts on the same shard."""
    answers = []
    with transaction.atomic():
        field_names.record(form, [["brand-new", "x"]])  # the rescue's lock on the form row
        storing = threading.Thread(target=lambda: answers.append(post(form.slug, {"n": "1"})))
        storing.start()
        storing.join(timeout=3)  # a submission waiting on the form row is still waiting here
        quota.record(user.pk, current_month())  # the rescue counts: the shard
    storing.join(timeout=10)

    assert [answer.status_code for answer in answers] == [200]
    assert Submission.objects.count() == 1
    assert quota.used(user.pk) == 2


def test_rescues_racing_submissions_never_answer_503(form, user, one_shard):
    held = [
        Submission.objects.create(form=form, data=[["name", f"held {n}"], [f"new{n}", "x"]],
                                  status=Status.SPAM,
                                  spam={"score": 1, "reasons": ["blocked_word"]})
        for n in range(12)
    ]

    def rescue(submission) -> None:
        try:
            submission_rescue(submission=Submission.objects.get(pk=submission.pk))
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=6) as pool:
        posts = [pool.submit(post, form.slug, {"n": str(n)}, f"10.0.{n // 250}.{n % 250}")
                 for n in range(120)]
        rescues = [pool.submit(rescue, submission) for submission in held]
        for done in rescues:
            done.result(timeout=60)
        statuses = [done.result(timeout=60).status_code for done in posts]

    assert statuses.count(200) == 120, {code: statuses.count(code) for code in set(statuses)}
    assert Submission.objects.filter(status=Status.INBOX).count() == 132
    assert quota.used(user.pk) == 132
