"""Verification codes leave through Django's email backend; here a real SMTP server."""

import socket

import pytest
from aiosmtpd.controller import Controller
from django.core import mail

from accounts.models import User
from accounts.services import _issue_code
from accounts.tasks import send_verification_email
from config import crypto


class Inbox:
    def __init__(self) -> None:
        self.messages: list[str] = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(envelope.content.decode())
        return "250 OK"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def smtp(settings):
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    settings.EMAIL_USE_TLS = False
    yield inbox
    controller.stop()


def test_signup_code_arrives_over_smtp(api, smtp):
    response = api.post(
        "/api/auth/signup",
        {"email": "new@example.com", "password": "a long passphrase"},
        format="json",
    )

    assert response.status_code == 201
    assert len(smtp.messages) == 1
    assert "To: new@example.com" in smtp.messages[0]
    assert "Your FormFlow verification code is" in smtp.messages[0]


def test_a_replaced_code_is_never_sent(db):
    user = User.objects.create_user("late@example.com", "a long passphrase")
    stale = crypto.encrypt("123456")
    _issue_code(user)  # the current code is another one

    send_verification_email(str(user.pk), stale)

    assert mail.outbox == []
