"""Account email (verification codes) and the record of whether it can be sent at all."""

from __future__ import annotations

import logging
import smtplib
import ssl
from dataclasses import dataclass
from datetime import datetime

from django.core.mail import EmailMessage

from accounts.models import MailerStatus
from core import clock, metrics

logger = logging.getLogger(__name__)

# Errors that no retry can mend: the server lacks STARTTLS, refuses our login or our sender,
# or speaks another TLS mode than EMAIL_USE_TLS / EMAIL_USE_SSL say. Anything else (refused
# connection, time-out, a dropped session) may pass, and is retried.
PERMANENT = (
    smtplib.SMTPNotSupportedError,
    smtplib.SMTPAuthenticationError,
    smtplib.SMTPSenderRefused,
    smtplib.SMTPHeloError,
    ssl.SSLError,
)


def send(*, subject: str, body: str, to: str) -> None:
    """Send one message; record the outcome; raise OSError (SMTPException is one) on failure."""
    send_message(EmailMessage(subject=subject, body=body, to=[to]))


def send_message(message: EmailMessage) -> None:
    """``send`` for a message built by the caller (a Reply-To, say)."""
    try:
        message.send()
    except OSError as error:
        _record_failure(error)
        raise
    _record_success()


def is_failing() -> bool:
    return MailerStatus.objects.filter(failing_since__isnull=False).exists()


@dataclass(frozen=True)
class State:
    """The mail server as the last send found it: failing since when (None: the last send
    went out, or none was tried), and the last error's type alone (its text may name the
    server's address or a recipient)."""

    failing_since: datetime | None
    last_error: str | None


def state() -> State:
    row = MailerStatus.objects.filter(id=1).first()
    if row is None or row.failing_since is None:
        return State(None, None)
    return State(row.failing_since, row.last_error.partition(":")[0] or None)


def _record_failure(error: OSError) -> None:
    text = f"{type(error).__name__}: {error}"[:500]
    logger.error("Account email could not be sent: %s", text)
    metrics.mail_failures.inc()
    status, _ = MailerStatus.objects.get_or_create(id=1)
    status.failing_since = status.failing_since or clock.now()
    status.last_error = text
    status.save()


def _record_success() -> None:
    MailerStatus.objects.filter(failing_since__isnull=False).update(failing_since=None)
