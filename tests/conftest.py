from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.core import mail
from django.core.cache import cache
from django.db import connection
from django.test import Client, TestCase
from rest_framework.test import APIClient

from accounts.models import User

PASSWORD = "correct-horse-battery"


def pytest_collection_modifyitems(config, items):
    """Tests marked postgres, redis or sqlite run only in the pass that has that backend.

    They are deselected (not skipped) elsewhere; .ci/run runs both passes, so in CI a
    missing service makes them fail.
    """
    engine = settings.DATABASES["default"]["ENGINE"]
    wanted = {
        "postgres": "postgresql" in engine,
        "sqlite": "sqlite" in engine,
        "redis": bool(settings.REDIS_URL),
    }
    keep, drop = [], []
    for item in items:
        missing = [name for name, ok in wanted.items() if item.get_closest_marker(name) and not ok]
        (drop if missing else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class RunsOnCommit:
    """Runs on_commit callbacks after each request, as a real commit would."""

    def generic(self, *args, **kwargs):
        with TestCase.captureOnCommitCallbacks(execute=True):
            return super().generic(*args, **kwargs)


class CommitClient(RunsOnCommit, APIClient):
    pass


class CommitBrowserClient(RunsOnCommit, Client):
    pass


@pytest.fixture
def wsgi(db):
    """The WSGI app as config/wsgi.py builds it. Like Django's test client, it leaves the
    test's database connection open (a request would close it at start and end)."""
    from django.core.handlers.wsgi import WSGIHandler
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    from edge.chunked import ChunkedBodies

    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield ChunkedBodies(WSGIHandler(), settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def client(db) -> CommitBrowserClient:
    """Django's test client, committing like a real request."""
    return CommitBrowserClient()


@pytest.fixture(autouse=True)
def _clean_cache():
    """Rate windows, quota counters, the deliveries-due flag and the forms a web process keeps
    start empty in every test."""
    from forms_app import form_cache
    from integrations.delivery import nudge

    cache.clear()
    nudge.take_flag()
    form_cache.clear()
    yield
    cache.clear()
    nudge.take_flag()
    form_cache.clear()


@pytest.fixture(autouse=True)
def _frozen_rate_windows(monkeypatch):
    """Hold django-ratelimit's clock still, so no test straddles a window boundary.

    Forked worker processes inherit the frozen clock too.
    """
    import time
    from types import SimpleNamespace

    import django_ratelimit.core

    from core.infra import ratelimit

    frozen = time.time()
    monkeypatch.setattr(django_ratelimit.core, "time", SimpleNamespace(time=lambda: frozen))
    monkeypatch.setattr(ratelimit, "now", lambda: frozen)


@pytest.fixture
def api(db) -> CommitClient:
    return CommitClient()


@pytest.fixture
def csrf_api(db) -> CommitClient:
    return CommitClient(enforce_csrf_checks=True)


def make_user(email: str = "owner@example.com", verified: bool = True, **extra) -> User:
    return User.objects.create_user(email=email, password=PASSWORD, is_verified=verified, **extra)


@pytest.fixture
def user(db) -> User:
    return make_user()


@pytest.fixture
def other_user(db) -> User:
    return make_user("other@example.com")


@pytest.fixture
def admin_client(client, db):
    """The Django admin, signed in as a superuser (admin@example.com)."""
    client.force_login(User.objects.create_superuser("admin@example.com", "admin-pass-123"))
    return client


def bearer(user: User) -> str:
    from accounts.services import token_for

    return f"Bearer {token_for(user)}"


@pytest.fixture
def owner_api(api, user) -> CommitClient:
    api.credentials(HTTP_AUTHORIZATION=bearer(user))
    return api


@pytest.fixture
def other_api(db, other_user) -> CommitClient:
    client = CommitClient()
    client.credentials(HTTP_AUTHORIZATION=bearer(other_user))
    return client


def last_code(address: str) -> str:
    for message in reversed(mail.outbox):
        if address in message.to:
            return re.search(r"\b(\d{6})\b", message.body).group(1)
    raise AssertionError(f"no code was mailed to {address}")


class Clock:
    """A controllable now() for the services."""

    def __init__(self, start):
        self.current = start

    def __call__(self):
        return self.current

    def advance(self, **kwargs) -> None:
        self.current += timedelta(**kwargs)


@pytest.fixture
def clock(monkeypatch):
    from django.utils import timezone

    from core import clock as clock_module

    fake = Clock(timezone.now())
    monkeypatch.setattr(clock_module, "now", fake)
    return fake


@pytest.fixture
def is_postgres() -> bool:
    return connection.vendor == "postgresql"


@pytest.fixture
def form(user):
    """A form whose owner is not emailed each submission, so a test of other deliveries sees
    only those (tests/integrations/test_owner_email.py turns it on)."""
    from forms_app.services import form_create

    return form_create(owner=user, name="Contact", notify_owner=False)


@pytest.fixture
def public(db) -> CommitClient:
    """An anonymous visitor's client."""
    return CommitClient()


def submit(client, form, data=None, **extra):
    """Post like a fetch() JSON client."""
    return client.post(f"/api/v1/f/{form.slug}", data or {"name": "Ada"}, format="json", **extra)


BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def post_html_form(client, form, data=None, **extra):
    """Post like a browser submitting an HTML form."""
    extra.setdefault("HTTP_ACCEPT", BROWSER_ACCEPT)
    return client.post(f"/api/v1/f/{form.slug}", data or {"name": "Ada"}, **extra)


def create_key(owner, forms, name="sync"):
    from pullapi.services import api_key_create

    return api_key_create(owner=owner, name=name, forms=[str(f.pk) for f in forms])[1]


@pytest.fixture
def pull_key(user, form) -> str:
    return create_key(user, [form])


@pytest.fixture
def puller(db, pull_key) -> CommitClient:
    client = CommitClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {pull_key}")
    return client


@pytest.fixture
def allow_private_receiver(receiver):
    """A webhook receiver on loopback, with private addresses allowed."""
    return receiver


def add_submission(
    form, data, at=None, ip="203.0.113.5", user_agent="UA", origin="https://site.example"
):
    """Store a submission through the real service; ``at`` moves its time afterwards."""
    from submissions.intake.store import submission_create
    from submissions.models import Submission

    pairs = [list(pair) for pair in data.items()] if isinstance(data, dict) else data
    submission = submission_create(
        form=form, data=pairs, ip=ip, user_agent=user_agent, origin=origin
    )
    if at is not None:
        Submission.objects.filter(pk=submission.pk).update(submitted_at=at)
        submission.refresh_from_db()
    return submission


@pytest.fixture
def allow_private(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True


@pytest.fixture
def receiver(allow_private):
    """A webhook receiver on loopback; set ``receiver.handler`` to change its answers."""
    from tests.fakes import FakeServer, Reply

    with FakeServer(lambda _request: Reply(200, {"ok": True})) as server:
        yield server


@pytest.fixture
def hook(user, receiver):
    from integrations.services import integration_create

    return integration_create(owner=user, type="WEBHOOK", config={"url": f"{receiver.url}/hook"})


def turn_on_two_factor(user: User) -> tuple[str, list[str]]:
    """Two-step sign-in on, through the service: (secret, recovery codes). Sign in with
    next_code(secret): the current step's code was spent turning it on."""
    import pyotp

    from accounts import two_factor

    secret, _ = two_factor.setup(user=user)
    codes = two_factor.enable(user=user, code=pyotp.TOTP(secret).now())
    return secret, codes


def next_code(secret: str) -> str:
    import time

    import pyotp

    return pyotp.TOTP(secret).at(time.time() + 30)
