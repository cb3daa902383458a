"""A rescue from the spam folder is counted like a public submission: at the monthly limit it
is refused and nothing moves (contract, "Exactness under concurrency": the limit holds across
rescues). On both setups: Redis's reservation, or the record without it."""

import pytest

from accounts import quota
from accounts.models import User
from forms_app.models import Form
from submissions.models import Status, Submission
from tests.conftest import submit

LIMIT = 3


@pytest.fixture
def form(form, user):
    User.objects.filter(pk=user.pk).update(monthly_submission_limit=LIMIT)
    Form.objects.filter(pk=form.pk).update(rate_limit=1000)
    return Form.objects.get(pk=form.pk)


def held(form) -> Submission:
    return Submission.objects.create(form=form, data=[["m", "casino"]], status=Status.SPAM,
                                     spam={"score": 1, "reasons": ["blocked_word"]})


def rescue(owner_api, form, submission):
    return owner_api.post(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}/not-spam")


def test_a_rescue_at_the_limit_is_refused_and_moves_nothing(owner_api, public, form):
    for n in range(LIMIT):
        assert submit(public, form, {"n": str(n)}).status_code == 200
    spam = held(form)

    answer = rescue(owner_api, form, spam)

    assert answer.status_code == 403
    assert answer.json()["error"] == "monthly_limit_reached"
    assert Submission.objects.get(pk=spam.pk).status == Status.SPAM
    assert quota.used(form.owner_id) == LIMIT


def test_a_rescue_under_the_limit_takes_one_place(owner_api, public, form):
    assert submit(public, form, {"n": "1"}).status_code == 200
    spam = held(form)

    assert rescue(owner_api, form, spam).status_code == 200

    assert quota.used(form.owner_id) == 2
    assert submit(public, form, {"n": "2"}).status_code == 200
    assert submit(public, form, {"n": "3"}).status_code == 403  # 1 + the rescue + 1 = 3
