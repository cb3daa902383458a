import pytest

from config.celery import app as celery_app
from integrations.services import integration_create
from tests.fakes import FakeServer, Reply


@pytest.fixture
def provider(settings):
    """A Resend-compatible email API on loopback."""
    with FakeServer(lambda _request: Reply(200, {"id": "email_1"})) as server:
        settings.EMAIL_PROVIDER_API_URL = server.url
        yield server


EMAIL_CONFIG = {
    "apiKey": "re_live_secret_1234",
    "fromEmail": "Forms <forms@example.com>",
    "toEmail": "owner@example.com",
}


@pytest.fixture
def mailer(user, provider):
    return integration_create(owner=user, type="EMAIL", config=dict(EMAIL_CONFIG))


def reset_broker_connections():
    """Make Celery reconnect, after a test changed the broker settings."""
    from core.infra.broker import breaker as broker_breaker

    celery_app._pool = None
    celery_app.amqp._producer_pool = None
    broker_breaker.reset()
