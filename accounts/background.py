"""The worker's side of the account endpoints a stranger can call with any address (sign-up,
resend, forgot password): looking the address up, writing, and mailing a code happen here, in
the worker (accounts/tasks.py runs them), where their time tells a caller nothing. The
request's side is in services.py."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction

from accounts import codes, mails
from accounts.models import CodePurpose, EmailCode, SignUpAttempt, User
from core import clock, crypto

SEND_WINDOW = timedelta(hours=1)
SENDS_PER_WINDOW = 5


def issue_code(user: User, purpose: str, previous: EmailCode | None = None,
               onward: str = "") -> None:
    """Replace the user's code for ``purpose`` (and so its link) and email the new one after
    commit; the mail task mints the link that goes with it. ``onward``: the dashboard's page
    the link goes on to once it has signed in (checked by the dashboard, again when opened)."""
    code = codes.new_code()
    now = clock.now()
    window_open = previous is not None and previous.send_window_start is not None and (
        now - previous.send_window_start < SEND_WINDOW
    )
    EmailCode.objects.update_or_create(
        user=user,
        purpose=purpose,
        defaults={
            "code_hash": codes.hash_code(user, code, purpose),
            "expires_at": now + settings.OTP_LIFETIME,
            "wrong_tries": {},
            "link_hash": "",
            "link_code_hash": "",
            "sent_at": now,
            "send_window_start": previous.send_window_start if previous and window_open else now,
            "sends_in_window": previous.sends_in_window + 1 if previous and window_open else 1,
        },
    )
    # The broker sees only a sealed code, never the plain digits, and a sealed onward page
    # (it may hold an invitation's token).
    sealed, sealed_onward = crypto.encrypt(code), seal(onward)
    transaction.on_commit(lambda: mails.send_code_email.delay(str(user.pk), sealed, purpose,
                                                              sealed_onward))


def seal(onward: str) -> str:
    return crypto.encrypt(onward) if onward else ""


def unseal(sealed_onward: str) -> str:
    return crypto.decrypt(sealed_onward) if sealed_onward else ""


def issue_code_if_allowed(user: User, purpose: str, onward: str = "") -> None:
    """A new code, unless the address had one in the last 60 s or 5 in the last hour."""
    previous = EmailCode.objects.filter(user=user, purpose=purpose).first()
    if previous is not None:
        now = clock.now()
        in_window = previous.send_window_start and now - previous.send_window_start < SEND_WINDOW
        if now - previous.sent_at < settings.OTP_RESEND_INTERVAL or (
                in_window and previous.sends_in_window >= SENDS_PER_WINDOW):
            return
    issue_code(user, purpose, previous, onward)


@transaction.atomic
def sign_up_in_background(*, email: str, password_hash: str, onward: str = "") -> None:
    """Create an account and send its code. An address that has an account already is never
    changed (that was a takeover: a stranger's password on the victim's account, verified by
    the victim's own code); an unverified one gets a fresh code within the send limits."""
    user = User.objects.select_for_update().filter(email=email).first()
    if user is None:
        try:
            with transaction.atomic():
                user = User.objects.create(email=email, password=password_hash)
        except IntegrityError:  # a second sign-up for the address won the race
            return
        issue_code(user, CodePurpose.VERIFY, onward=onward)
    elif not user.is_verified:
        issue_code_if_allowed(user, CodePurpose.VERIFY, onward)
    else:
        # Verified already: the sign-up changes nothing, but its record stays (purged with the
        # rest) so that signing in with its password answers as for a pending sign-up. Only the
        # newest of equal ones is kept.
        same = SignUpAttempt.objects.filter(email=email, password_hash=password_hash)
        older = same.order_by("-created_at", "-pk").values_list("pk", flat=True)[1:]
        SignUpAttempt.objects.filter(pk__in=list(older)).delete()


@transaction.atomic
def resend_code_in_background(*, email: str, onward: str = "") -> None:
    user = User.objects.select_for_update().filter(email=email, is_verified=False).first()
    if user is not None:
        issue_code_if_allowed(user, CodePurpose.VERIFY, onward)


@transaction.atomic
def reset_code_in_background(*, email: str) -> None:
    user = User.objects.select_for_update().filter(email=email, is_active=True).first()
    if user is not None:
        issue_code_if_allowed(user, CodePurpose.RESET)
