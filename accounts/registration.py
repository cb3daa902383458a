"""Who may sign up: ``REGISTRATION`` is ``open`` (anyone), ``invite`` (addresses an operator
invited, for 7 days) or ``closed`` (nobody; operators make accounts with
``manage.py createuser``). Checked before anything else a sign-up does."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction

from accounts import hooks
from accounts.models import Invitation, User, normalize_email
from accounts.services import validate_new_password
from core import clock
from core.errors import ServiceError

OPEN, INVITE, CLOSED = "open", "invite", "closed"
MODES = (OPEN, INVITE, CLOSED)
INVITATION_LIFETIME = timedelta(days=7)

CLOSED_MESSAGE = "Sign-up is closed on this server. Ask its operator for an account."
INVITE_MESSAGE = "Sign-up on this server is by invitation, and this address has none."


def mode() -> str:
    return settings.REGISTRATION


def check(email: Any) -> None:
    """Raise ``registration_closed`` (403) unless ``email`` may sign up now."""
    if mode() == OPEN:
        return
    if mode() == INVITE and isinstance(email, str) and is_invited(email):
        return
    message = INVITE_MESSAGE if mode() == INVITE else CLOSED_MESSAGE
    raise ServiceError("registration_closed", message, status_code=403)


def is_invited(email: str) -> bool:
    """An operator's invitation, or an open invitation to a team."""
    email = normalize_email(email)
    operator = Invitation.objects.filter(email=email, expires_at__gt=clock.now()).exists()
    return operator or hooks.invited_elsewhere(email)


def invitation_create(*, email: str) -> Invitation:
    """Invite ``email`` for 7 days from now; an address invited before is renewed."""
    now = clock.now()
    invitation, _ = Invitation.objects.update_or_create(
        email=normalize_email(email),
        defaults={"invited_at": now, "expires_at": now + INVITATION_LIFETIME},
    )
    return invitation


@transaction.atomic
def user_create_verified(*, email: str, password: str, staff: bool = False) -> User:
    """An operator's account for someone (``manage.py createuser``), whatever REGISTRATION
    says: verified at once, its password held to the same validators as a sign-up's."""
    email = normalize_email(email)
    validate_new_password(password, email)
    if User.objects.filter(email=email).exists():
        raise ServiceError("email_taken", f"An account for {email} already exists.",
                           details={"email": "An account with this address already exists."})
    if staff:
        return User.objects.create_superuser(email=email, password=password)
    return User.objects.create_user(email=email, password=password, is_verified=True)
