"""Verification codes leave through Django's email backend; here a real SMTP server."""

import socket
import time

import pytest
from aiosmtpd.controller import Controller
from django.core import mail

from accounts.background import issue_code
from accounts.mails import send_code_email
from accounts.models import CodePurpose, User
from core import crypto


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
    settings.EMAIL_BACKEND = "accounts.smtp.BoundedEmailBackend"
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
    issue_code(user, CodePurpose.VERIFY)  # the current code is another one

    send_code_email(str(user.pk), stale, CodePurpose.VERIFY)

    assert mail.outbox == []


def sign_up(api, email):
    return api.post(
        "/api/auth/signup", {"email": email, "password": "a long passphrase"}, format="json"
    )


def test_a_relay_without_starttls_is_recorded_and_signup_stops_claiming_a_code_was_sent(
    api, smtp, settings
):
    from accounts.models import MailerStatus
    from accounts.views import NO_MAIL_MESSAGE, SIGNUP_MESSAGE

    settings.EMAIL_USE_TLS = True  # the default, against a relay that offers no STARTTLS

    first = sign_up(api, "first@example.com")
    second = sign_up(api, "second@example.com")

    assert first.status_code == second.status_code == 201
    assert smtp.messages == []
    status = MailerStatus.objects.get()
    assert status.failing_since is not None
    assert "STARTTLS" in status.last_error
    assert second.json() == {"message": NO_MAIL_MESSAGE}
    assert NO_MAIL_MESSAGE != SIGNUP_MESSAGE

    settings.EMAIL_USE_TLS = False  # the operator fixes the setting
    sign_up(api, "third@example.com")
    fourth = sign_up(api, "fourth@example.com")

    assert len(smtp.messages) == 2
    assert MailerStatus.objects.get().failing_since is None
    assert fourth.json() == {"message": SIGNUP_MESSAGE}


def test_a_passing_mail_failure_is_retried_a_bounded_number_of_times(db, monkeypatch):
    from accounts import mailer, mails

    user = User.objects.create_user("retry@example.com", "a long passphrase")
    issue_code(user, CodePurpose.VERIFY)
    code = "000000"
    monkeypatch.setattr("accounts.codes.new_link", lambda _user, _code, _purpose: "token")
    calls = []

    def refused(**_kwargs):
        calls.append(1)
        raise ConnectionRefusedError("connection refused")

    monkeypatch.setattr(mailer, "send", refused)
    # Eager retries run at once, inside apply(); let it report the failure instead of raising.
    monkeypatch.setitem(mails.send_code_email.app.conf, "task_eager_propagates", False)

    result = mails.send_code_email.apply((str(user.pk), crypto.encrypt(code), "verify"))

    assert result.failed()
    assert len(calls) == mails.MAX_RETRIES + 1


def test_a_permanent_mail_failure_is_not_retried(db, monkeypatch):
    import smtplib

    from accounts import mailer, mails

    user = User.objects.create_user("auth@example.com", "a long passphrase")
    monkeypatch.setattr("accounts.codes.new_link", lambda _user, _code, _purpose: "token")
    calls = []

    def refused_login(**_kwargs):
        calls.append(1)
        raise smtplib.SMTPAuthenticationError(535, b"bad credentials")

    monkeypatch.setattr(mailer, "send", refused_login)

    result = mails.send_code_email.apply((str(user.pk), crypto.encrypt("123456"), "verify"))

    assert result.successful()
    assert len(calls) == 1


# --- Every send is bounded by the wall clock (accounts/smtp.py) -------------------------------


@pytest.fixture
def slow_relay(settings):
    from tests.fakes import SlowRelay

    relays = []

    def make(trickle: str):
        relays.append(SlowRelay(trickle))
        settings.EMAIL_BACKEND = "accounts.smtp.BoundedEmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", relays[-1].port
        settings.EMAIL_USE_TLS = False
        settings.EMAIL_USE_SSL = trickle == "tls"
        settings.EMAIL_TIMEOUT = 10
        return relays[-1]

    yield make
    for relay in relays:
        relay.close()


def test_a_signup_against_a_trickling_relay_ends_within_the_bound(api, slow_relay, monkeypatch):
    """A relay that sends its greeting a byte every 1.5 s: no read ever waits EMAIL_TIMEOUT,
    but the send ends at 10 s, so the request that sent it (tasks run in the request here)
    ends well within its 30 s, and the failure is recorded."""
    from accounts import mails
    from accounts.models import MailerStatus

    slow_relay("greeting")
    monkeypatch.setattr(mails.send_code_email, "max_retries", 0)
    monkeypatch.setitem(mails.send_code_email.app.conf, "task_eager_propagates", False)
    began = time.monotonic()

    response = sign_up(api, "slow@example.com")

    assert time.monotonic() - began < 10.6
    assert response.status_code == 201
    assert "TimeoutError: Timed out after 10 s" in MailerStatus.objects.get().last_error


@pytest.mark.parametrize("trickle", ["data", "tls"])
def test_a_trickling_reply_or_handshake_ends_the_send_at_its_deadline(db, slow_relay, trickle):
    from accounts import mailer
    from core.infra import wallclock

    slow_relay(trickle)
    began = time.monotonic()

    with wallclock.deadline(2), pytest.raises(TimeoutError):
        mailer.send(subject="Code", body="123456", to="a@example.com")

    assert time.monotonic() - began < 2.5


def test_a_name_lookup_that_never_answers_ends_the_send_at_its_deadline(db, settings,
                                                                        monkeypatch):
    import threading

    from accounts import mailer
    from core.infra import wallclock

    never = threading.Event()

    def unanswered(*args, **kwargs):
        never.wait(30)
        raise socket.gaierror("no answer")

    settings.EMAIL_BACKEND = "accounts.smtp.BoundedEmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_USE_TLS = "relay.example", 25, False
    monkeypatch.setattr(socket, "getaddrinfo", unanswered)
    began = time.monotonic()
    try:
        with wallclock.deadline(2), pytest.raises(TimeoutError):
            mailer.send(subject="Code", body="123456", to="a@example.com")
    finally:
        never.set()

    assert time.monotonic() - began < 2.5


def test_account_tasks_keep_the_names_queued_messages_carry():
    """Messages queued by an earlier version name the tasks by these strings, whichever
    module of accounts now holds them."""
    from config.celery import app

    app.loader.import_default_modules()
    names = {"accounts.tasks.sign_up", "accounts.tasks.resend_code",
             "accounts.tasks.send_reset_code", "accounts.tasks.send_code_email",
             "accounts.tasks.send_sign_in_alert"}
    assert names <= set(app.tasks)
