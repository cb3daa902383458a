"""The public endpoint while Redis is away: it keeps answering, the quota stays exact (the
database decides), rate limits hold per process, and nothing is lost."""

import pytest
import redis as redis_py

from core.infra import redis
from integrations.models import Delivery
from integrations.services import integration_create
from submissions.intake import admission
from submissions.intake.admission import in_redis
from submissions.models import Submission
from tests.conftest import submit

pytestmark = pytest.mark.redis

# Nothing listens on port 1: every call fails at once, as with Redis down.
DEAD = redis_py.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)


@pytest.fixture
def outage(monkeypatch):
    """Redis away (its data kept, as after a network cut), until ``outage.end()``."""
    real = redis.client()
    monkeypatch.setattr(admission.ratelimit, "_local", admission.ratelimit.LocalWindows())
    monkeypatch.setattr(in_redis, "_stale_quotas", set())
    monkeypatch.setattr(in_redis, "_unreleased", [])

    class Outage:
        def begin(self):
            monkeypatch.setattr(redis, "client", lambda: DEAD)

        def end(self):
            monkeypatch.setattr(redis, "client", lambda: real)
            redis.recovered()

    outage = Outage()
    outage.begin()
    yield outage
    outage.end()


def test_submissions_are_stored_while_redis_is_away(public, form, user, settings, outage):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    integration_create(owner=user, type="WEBHOOK", config={"url": "http://127.0.0.1:9/hook"})

    responses = [submit(public, form, {"n": str(i)}) for i in range(3)]

    assert [r.status_code for r in responses] == [200, 200, 200]
    assert Submission.objects.count() == 3
    assert Delivery.objects.count() == 3  # in the outbox, whatever became of the nudge


def test_the_quota_stays_exact_while_redis_is_away(public, form, user, outage):
    user.monthly_submission_limit = 2
    user.save()

    statuses = [submit(public, form).status_code for _ in range(3)]

    assert statuses == [200, 200, 403]
    assert Submission.objects.count() == 2


def test_the_rate_limit_falls_back_to_the_process(public, form, outage):
    form.rate_limit = 2
    form.save()

    statuses = [submit(public, form).status_code for _ in range(3)]

    assert statuses == [200, 200, 429]


def test_a_counter_gone_stale_is_seeded_again_when_redis_returns(public, form, user, outage):
    user.monthly_submission_limit = 3
    user.save()
    outage.end()
    assert submit(public, form, {"n": "1"}).status_code == 200  # counted in Redis: 1
    outage.begin()
    assert submit(public, form, {"n": "2"}).status_code == 200  # counted in the database only
    outage.end()

    # Redis still says 1; the database says 2: one more, not two.
    statuses = [submit(public, form, {"n": str(n)}).status_code for n in (3, 4)]

    assert statuses == [200, 403]
    assert Submission.objects.count() == 3


@pytest.fixture
def cache_away(settings, monkeypatch):
    """The shared cache (Redis) unreachable, for every rate limit that goes through it."""
    from core.infra import ratelimit

    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"socket_connect_timeout": 1},
        }
    }
    monkeypatch.setattr(ratelimit, "_local", ratelimit.LocalWindows())
    yield
    redis.recovered()


def test_sign_in_limits_hold_per_process_while_the_cache_is_away(api, user, cache_away):
    wrong = {"email": user.email, "password": "not-the-password"}
    statuses = [api.post("/api/auth/login", wrong, format="json").status_code for _ in range(11)]

    assert statuses[:10] == [401] * 10
    assert statuses[10] == 429


def test_the_pull_api_answers_while_the_cache_is_away(puller, form, cache_away):
    response = puller.get("/api/v1/submissions", {"formId": str(form.pk)})

    assert response.status_code == 200
    assert response["X-RateLimit-Remaining"] == "59"
