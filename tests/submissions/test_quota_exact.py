"""The monthly limit is exact (contract, "Exactness under concurrency"): across rescues,
operator resets, Redis flushes, and requests that end without storing after admission.

Each test is the issue's reproduction: limit 5, some used, one request admitted and then
ended without storing (or stored) while something else happened to the counter; then 10 more
posts. The accepted ones must fill the limit exactly, never pass it."""

import threading

import pytest
from django.db import OperationalError, connection, transaction
from django.test import Client

from accounts import quota
from accounts.models import User, current_month
from accounts.services import usage_reset
from core.infra import redis
from forms_app.models import Form
from submissions.intake import admission, captcha
from submissions.intake.admission import in_redis
from submissions.models import Status, Submission
from submissions.services import submission_rescue
from tests.conftest import CommitClient, add_submission, submit

pytestmark = pytest.mark.redis

LIMIT = 5


@pytest.fixture
def form(form, user):
    User.objects.filter(pk=user.pk).update(monthly_submission_limit=LIMIT)
    Form.objects.filter(pk=form.pk).update(rate_limit=1000)
    return Form.objects.get(pk=form.pk)


def use(form, count: int) -> None:
    for n in range(count):
        add_submission(form, {"used": str(n)})


def ten_more(public, form) -> int:
    """Posts 10 ordinary submissions; how many were accepted."""
    statuses = [submit(public, form, {"n": str(n)}).status_code for n in range(10)]
    assert set(statuses) <= {200, 403}
    return statuses.count(200)


def inbox() -> int:
    return Submission.objects.filter(status=Status.INBOX).count()


def during_admission(monkeypatch, what) -> None:
    """Run ``what`` right after the next request is admitted (its quota reserved)."""
    admit = admission.admit

    def admitted_then(*args, **kwargs):
        ticket = admit(*args, **kwargs)
        monkeypatch.setattr(admission, "admit", admit)
        what()
        return ticket

    monkeypatch.setattr(admission, "admit", admitted_then)


def counter_key(form) -> str:
    return f"formflow:quota:{form.owner_id}:{current_month():%Y-%m}"


def refused_at_the_limit(public, form, response) -> None:
    """The request in flight was admitted again and refused; the limit is full, not passed."""
    assert response.status_code == 403
    assert response.json()["error"] == "monthly_limit_reached"
    assert inbox() == LIMIT
    assert ten_more(public, form) == 0


def a_honeypot_catch(public, form) -> None:
    Form.objects.filter(pk=form.pk).update(honeypot_field="website")
    assert submit(public, form, {"name": "bot", "website": "spam.example"}).status_code == 200
    Form.objects.filter(pk=form.pk).update(honeypot_field=None)


def test_a_counter_deleted_while_a_request_is_admitted_then_released(public, form,
                                                                      monkeypatch):
    """The issue's figures: 6 of the next 10 were accepted; exactly 2 may be."""
    use(form, 3)
    during_admission(monkeypatch, lambda: redis.client().delete(counter_key(form)))
    a_honeypot_catch(public, form)

    assert ten_more(public, form) == 2
    assert inbox() == LIMIT


@pytest.mark.django_db(transaction=True)
def test_a_rescue_between_a_reservation_and_its_release(public, form, monkeypatch):
    use(form, 3)
    held = Submission.objects.create(form=form, data=[["m", "casino"]], status=Status.SPAM,
                                     spam={"score": 1, "reasons": ["blocked_word"]})

    def rescued() -> None:
        """The owner's "Not spam", committed by another web process meanwhile."""

        def rescue() -> None:
            try:
                submission_rescue(submission=Submission.objects.get(pk=held.pk))
            finally:
                connection.close()

        thread = threading.Thread(target=rescue)
        thread.start()
        thread.join(timeout=10)

    during_admission(monkeypatch, rescued)
    a_honeypot_catch(public, form)

    assert ten_more(public, form) == 1
    assert inbox() == LIMIT


def test_an_operator_reset_while_a_request_is_admitted(public, form, user, monkeypatch):
    for n in range(4):  # through the endpoint: their reservations are still in Redis
        assert submit(public, form, {"before": str(n)}).status_code == 200
    during_admission(monkeypatch, lambda: usage_reset(user=user))
    a_honeypot_catch(public, form)

    assert ten_more(public, form) == LIMIT
    assert inbox() == 4 + LIMIT


def test_a_rescue_after_recent_submissions_counts_one_more_not_more(owner_api, public, form):
    for n in range(2):
        assert submit(public, form, {"before": str(n)}).status_code == 200
    held = Submission.objects.create(form=form, data=[["m", "casino"]], status=Status.SPAM,
                                     spam={"score": 1, "reasons": ["blocked_word"]})
    rescue = owner_api.post(f"/api/v1/forms/{form.pk}/submissions/{held.pk}/not-spam")
    assert rescue.status_code == 200

    assert ten_more(public, form) == 2
    assert inbox() == LIMIT


def test_a_recount_racing_an_operator_reset_leaves_the_reset_counter(owner_api, public, form,
                                                                     user, monkeypatch):
    """A rescue's recount reads the record, then an operator's reset lands before the recount
    sets the counter: the reset's counter (nothing used) stands, not the count read before."""
    for n in range(3):
        assert submit(public, form, {"before": str(n)}).status_code == 200
    held = Submission.objects.create(form=form, data=[["m", "casino"]], status=Status.SPAM,
                                     spam={"score": 1, "reasons": ["blocked_word"]})
    read = quota.used_under

    def read_then_reset(*args, **kwargs):
        monkeypatch.setattr(quota, "used_under", read)
        counted = read(*args, **kwargs)
        usage_reset(user=user)
        return counted

    monkeypatch.setattr(quota, "used_under", read_then_reset)
    rescue = owner_api.post(f"/api/v1/forms/{form.pk}/submissions/{held.pk}/not-spam")
    assert rescue.status_code == 200
    assert quota.used_under is read  # the recount ran

    assert ten_more(public, form) == LIMIT
    assert quota.used(form.owner_id) == LIMIT


def test_a_request_finding_the_counter_seeded_meanwhile_takes_no_lock(public, form,
                                                                      monkeypatch):
    """In a burst with no counter, each request found none and queued on the month's locks
    in turn, only to leave them be; past the lock bound the last ones got 503. One that finds
    a counter seeded meanwhile now leaves at once; one whose counter the record has moved
    past still seeds, under the locks."""
    assert submit(public, form, {"n": "first"}).status_code == 200  # seeds the counter
    locked = []
    month_locked = quota.month_locked

    def spy(*args):
        locked.append(args)
        return month_locked(*args)

    monkeypatch.setattr(quota, "month_locked", spy)
    client, month = redis.client(), current_month()
    generation = int(client.get(f"{counter_key(form)}:generation"))

    in_redis._seed(client, form.owner_id, month)
    assert locked == []
    in_redis._seed(client, form.owner_id, month, fenced=generation)
    assert len(locked) == 1
    assert ten_more(public, form) == LIMIT - 1


def test_a_flush_mid_month_with_nothing_running(public, form):
    use(form, 3)
    assert submit(public, form, {"n": "first"}).status_code == 200
    redis.client().flushdb()

    assert ten_more(public, form) == 1
    assert inbox() == LIMIT


@pytest.fixture
def ends_without_storing(owner_api, public, form, monkeypatch):
    """Ways a request admitted (quota reserved) ends without storing, by name."""

    def honeypot():
        a_honeypot_catch(public, form)

    def captcha_failure():
        owner_api.patch(f"/api/v1/forms/{form.pk}", {"recaptchaSecret": "s"}, format="json")
        monkeypatch.setattr(captcha, "verify", lambda **kwargs: False)
        response = submit(public, form, {"name": "Ada", "g-recaptcha-response": "bad"})
        assert response.status_code == 422
        owner_api.patch(f"/api/v1/forms/{form.pk}", {"recaptchaSecret": None}, format="json")

    def spam_hold():
        owner_api.patch(f"/api/v1/forms/{form.pk}", {"blockedWords": ["casino"]}, format="json")
        assert submit(public, form, {"message": "casino"}).status_code == 200
        owner_api.patch(f"/api/v1/forms/{form.pk}", {"blockedWords": []}, format="json")

    def bad_body():
        assert submit(public, form, {"name": "nul \u0000"}).status_code == 400

    return {"honeypot": honeypot, "captcha": captcha_failure, "spam hold": spam_hold,
            "bad body": bad_body}


@pytest.mark.parametrize("ending", ["honeypot", "captcha", "spam hold", "bad body"])
def test_a_flush_while_a_request_is_admitted_then_ends_without_storing(
    public, form, monkeypatch, ends_without_storing, ending
):
    use(form, 3)
    during_admission(monkeypatch, lambda: redis.client().flushdb())
    ends_without_storing[ending]()

    assert ten_more(public, form) == 2
    assert inbox() == LIMIT


def test_a_release_gives_back_only_what_it_holds(form):
    """Two releases of one ticket, or a release after the counter was recounted, take away
    nothing that another request holds."""
    from types import SimpleNamespace

    use(form, 1)
    visit = SimpleNamespace(rate_key="203.0.113.9")
    ticket = admission.admit(visit, form, token="one")
    other = admission.admit(visit, form, token="two")
    key = counter_key(form)
    assert int(redis.client().get(key)) == 3

    admission._counter.release(ticket)
    ticket.reserved = True  # a second release of the same reservation
    admission._counter.release(ticket)

    assert int(redis.client().get(key)) == 2
    admission._counter.release(other)
    assert int(redis.client().get(key)) == 1


# A request admitted before a flush or a restart that stores after other requests seeded the
# counter again from the record: the record did not have it yet, Redis had forgotten it.


def another_request_seeds_again(form) -> None:
    """Another visitor's post, answered while the first request is between its admission and
    its store: it finds no counter, seeds it from the record, and stores."""
    assert submit(CommitClient(), form, {"other": "visitor"}).status_code == 200


def test_a_request_admitted_before_a_flush_stores_after_the_counter_is_seeded_again(
    public, form, monkeypatch
):
    """Limit 5, 3 used, 1 in flight at the flush: 2 more in all, that one included."""
    use(form, 3)

    def flushed_and_seeded_again():
        redis.client().flushdb()
        another_request_seeds_again(form)

    during_admission(monkeypatch, flushed_and_seeded_again)
    assert submit(public, form, {"in": "flight"}).status_code == 200  # admitted again

    assert ten_more(public, form) == 0
    assert inbox() == LIMIT
    assert quota.used(form.owner_id) == LIMIT


def test_a_request_fenced_off_at_the_limit_is_refused(public, form, monkeypatch):
    """4 used, 1 in flight at the flush, and another request takes the last place under the
    new counter: the one in flight is admitted again, and refused."""
    use(form, 4)

    def flushed_and_seeded_again():
        redis.client().flushdb()
        another_request_seeds_again(form)

    during_admission(monkeypatch, flushed_and_seeded_again)
    refused_at_the_limit(public, form, submit(public, form, {"in": "flight"}))


def test_a_keyed_request_fenced_off_keeps_its_id(public, form, monkeypatch):
    use(form, 3)
    during_admission(monkeypatch, lambda: (redis.client().flushdb(),
                                           another_request_seeds_again(form)))
    first = submit(public, form, {"in": "flight"}, HTTP_IDEMPOTENCY_KEY="order-1")
    again = submit(public, form, {"in": "flight"}, HTTP_IDEMPOTENCY_KEY="order-1")

    assert first.status_code == again.status_code == 200
    assert first.json()["id"] == again.json()["id"]
    assert Submission.objects.filter(pk=first.json()["id"], data=[["in", "flight"]]).exists()
    assert inbox() == LIMIT


@pytest.mark.parametrize("what", ["reset", "flush then reset"])
def test_a_request_admitted_before_an_operator_reset_stores_after_it(
    public, form, user, monkeypatch, what
):
    """After the reset the account has its whole limit, the request in flight included."""
    use(form, 3)

    def reset():
        if what == "flush then reset":
            redis.client().flushdb()
        usage_reset(user=user)

    during_admission(monkeypatch, reset)
    assert submit(public, form, {"in": "flight"}).status_code == 200

    assert ten_more(public, form) == LIMIT - 1
    assert inbox() == 3 + LIMIT
    assert quota.used(form.owner_id) == LIMIT


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_one_statement_store_is_fenced_off_too(form, monkeypatch):
    """Each request in its own transaction and connection, as in production: the
    one-statement store (submissions/intake/store/pg.py) of the request in flight inserts
    nothing, and it is admitted again."""
    use(form, 3)

    def other_process_seeds_again():
        redis.client().flushdb()
        other = threading.Thread(target=lambda: post(form, {"other": "visitor"}, answers))
        other.start()
        other.join(timeout=10)

    answers: list[int] = []
    during_admission(monkeypatch, other_process_seeds_again)
    post(form, {"in": "flight"}, answers)
    for n in range(10):
        post(form, {"n": str(n)}, answers)

    assert answers[:2] == [200, 200]  # the other visitor's, then the one in flight
    assert answers[2:] == [403] * 10
    assert inbox() == LIMIT
    assert quota.used(form.owner_id) == LIMIT


def post(form, data: dict, answers: list[int]) -> None:
    try:
        response = Client().post(f"/api/v1/f/{form.slug}", data, content_type="application/json")
        answers.append(response.status_code)
    finally:
        connection.close()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_seeding_waits_for_a_submission_being_stored(form, user):
    """A store that counted on a shard and has not committed yet: the seeding's lock on the
    month's shards waits for it, so the count it reads includes it, and the generation it
    hands out fences off anything admitted before."""
    month = current_month()
    generation, recorded = seed_in_own_session(user, month)
    seeded: list[tuple[int, int]] = []
    with transaction.atomic():
        quota.record(user.pk, month, generation)  # the store, holding its shard
        seeding = threading.Thread(target=lambda: seeded.append(seed_in_own_session(user, month)))
        seeding.start()
        seeding.join(timeout=2)
        assert seeding.is_alive()  # waiting on the shard
    seeding.join(timeout=10)

    assert seeded == [(generation + 1, recorded + 1)]
    with pytest.raises(quota.Fenced):
        quota.record(user.pk, month, generation)
    assert quota.used(user.pk) == recorded + 1


def seed_in_own_session(user, month) -> tuple[int, int]:
    """What a seeding does to the record: the generation moved on, the count read."""
    try:
        with quota.month_locked(user.pk, month) as record:
            return record.move_on(), record.recorded
    finally:
        connection.close()


# Paths that would leave a ticket unreserved while Redis is configured: its store must not
# count past reservations Redis holds.


def test_a_request_stored_by_the_database_while_redis_blinked_fences_the_reservations(
    public, form, monkeypatch
):
    """4 used: one request holds a Redis reservation while another, admitted by the
    database during a blink (this process's breaker open), takes the last place. The first
    is admitted again when it stores, and refused."""
    use(form, 4)

    def another_stored_while_redis_is_away():
        redis.failed(ConnectionError("blink"), "a test")
        try:
            assert submit(CommitClient(), form, {"while": "away"}).status_code == 200
        finally:
            redis.recovered()

    during_admission(monkeypatch, another_stored_while_redis_is_away)
    refused_at_the_limit(public, form, submit(public, form, {"in": "flight"}))


def test_a_counter_left_without_its_generation_is_seeded_once(public, form):
    """1.0.0 kept the counter alone: after the upgrade it is seeded under a generation on the
    first request, and the requests after it are admitted by Redis again (reserved)."""
    use(form, 3)
    client = redis.client()
    client.flushdb()
    client.set(counter_key(form), 3)

    assert submit(public, form, {"first": "after the upgrade"}).status_code == 200

    assert client.get(f"{counter_key(form)}:generation") is not None
    assert int(client.get(counter_key(form))) == 4
    assert ten_more(public, form) == 1
    assert inbox() == LIMIT


def test_a_counter_gone_again_right_after_its_seeding_is_a_503(public, form, monkeypatch):
    """The counter lost between the seeding and the retry (a flush, a restart; the form's
    version tokens kept, or the request would start again on a fresh read): no unreserved
    admission past what Redis may still hold; the client is told to try again, and nothing
    is stored."""
    use(form, 3)
    redis.client().delete(counter_key(form))
    seed = in_redis._seed

    def seeded_then_flushed(client, *args):
        seed(client, *args)
        monkeypatch.setattr(in_redis, "_seed", seed)
        client.delete(counter_key(form), f"{counter_key(form)}:generation")

    monkeypatch.setattr(in_redis, "_seed", seeded_then_flushed)
    response = submit(public, form, {"in": "flight"})

    assert response.status_code == 503
    assert inbox() == 3
    assert ten_more(public, form) == 2


def test_a_rescue_running_through_an_operator_reset_is_counted_live(public, form, user,
                                                                    monkeypatch):
    """A rescue's reservation bears the id of a submission already in the spam folder: an
    operator reset in the middle still counts it as live, not as stored. Then the limit's
    worth of public posts fill it, and the rescue, admitted again, is refused."""
    held = Submission.objects.create(form=form, data=[["m", "casino"]], status=Status.SPAM,
                                     spam={"score": 1, "reasons": ["blocked_word"]})
    admit_rescue = admission.admit_rescue

    def admitted_then_reset(*args, **kwargs):
        ticket = admit_rescue(*args, **kwargs)
        monkeypatch.setattr(admission, "admit_rescue", admit_rescue)
        usage_reset(user=user)
        assert ten_more(public, form) == LIMIT - 1  # the rescue holds one place
        return ticket

    monkeypatch.setattr(admission, "admit_rescue", admitted_then_reset)
    submission_rescue(submission=Submission.objects.get(pk=held.pk))

    assert inbox() == LIMIT
    assert quota.used(form.owner_id) == LIMIT


def test_a_seeding_that_failed_to_commit_leaves_its_generation_to_no_one(public, form,
                                                                         monkeypatch):
    """A seeding that set the counter and then failed to commit (its connection lost, its
    process killed) leaves a counter under a generation the record never reached. Requests
    are admitted under it; after a flush the next seeding must not hand out that generation
    again: a request admitted under the first counter would store under the second, which
    never counted it. Limit 5, 3 used, then the one in flight and one more: 0 of 10."""
    use(form, 3)
    publish = in_redis._publish

    def published_then_failed(*args, **kwargs):
        publish(*args, **kwargs)
        monkeypatch.setattr(in_redis, "_publish", publish)
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(in_redis, "_publish", published_then_failed)
    assert submit(public, form, {"n": "seeding failed"}).status_code == 503

    def flushed_and_seeded_again():
        redis.client().flushdb()
        another_request_seeds_again(form)

    during_admission(monkeypatch, flushed_and_seeded_again)
    assert submit(public, form, {"in": "flight"}).status_code == 200

    assert ten_more(public, form) == 0
    assert inbox() == LIMIT
    assert quota.used(form.owner_id) == LIMIT


def test_a_seeding_whose_answer_was_lost_is_not_matched_by_the_database_fence(public, form,
                                                                              monkeypatch):
    """Redis ran the seeding's script but its answer never came (the call timed out): the
    seeding rolled back, the request was counted by the database, which moved the record to
    a new generation to fence off what Redis holds. That generation must not be the one the
    lost script set beside the counter, or another web process (with no debt to pay Redis)
    admits under a counter that missed the database's count. Limit 5, 3 used: 1 more."""
    use(form, 3)
    publish = in_redis._publish

    def published_then_timed_out(*args, **kwargs):
        publish(*args, **kwargs)
        monkeypatch.setattr(in_redis, "_publish", publish)
        raise redis.Unavailable("Timeout reading from socket")

    monkeypatch.setattr(in_redis, "_publish", published_then_timed_out)
    assert submit(public, form, {"n": "counted by the database"}).status_code == 200
    redis.recovered()
    in_redis._stale_quotas.clear()  # the posts below come from another web process

    assert ten_more(public, form) == 1
    assert inbox() == LIMIT
    assert quota.used(form.owner_id) == LIMIT
