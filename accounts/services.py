"""Account writes: signup, email verification, login and token revocation."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime

from django.conf import settings
from django.contrib.auth import password_validation
from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework_simplejwt.tokens import AccessToken

from accounts.models import EmailCode, RevokedToken, User, normalize_email
from config import clock, crypto
from config.errors import ServiceError

INVALID_CREDENTIALS = ServiceError(
    "invalid_credentials", "The email or password is incorrect.", status_code=401
)


def _hash_code(user: User, code: str) -> str:
    message = f"{user.pk}:{code}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


def code_is_current(user: User, code: str) -> bool:
    entry = EmailCode.objects.filter(user=user).first()
    return entry is not None and hmac.compare_digest(entry.code_hash, _hash_code(user, code))


def _new_code() -> str:
    return f"{secrets.randbelow(1_000_000):06d}"


def validate_new_password(password: str, email: str) -> None:
    try:
        password_validation.validate_password(password, user=User(email=email))
    except ValidationError as exc:
        raise ServiceError(
            "validation_error",
            "Some fields are not valid.",
            details={"password": " ".join(exc.messages)},
        ) from None


def _issue_code(user: User) -> None:
    """Replace the user's code and email the new one after the transaction commits."""
    from accounts.tasks import send_verification_email

    code = _new_code()
    now = clock.now()
    EmailCode.objects.update_or_create(
        user=user,
        defaults={
            "code_hash": _hash_code(user, code),
            "expires_at": now + settings.OTP_LIFETIME,
            "failed_attempts": 0,
            "sent_at": now,
        },
    )
    # The broker sees only a sealed code, never the plain digits.
    sealed = crypto.encrypt(code)
    transaction.on_commit(lambda: send_verification_email.delay(str(user.pk), sealed))


@transaction.atomic
def user_sign_up(*, email: str, password: str) -> None:
    email = normalize_email(email)
    validate_new_password(password, email)
    user = User.objects.select_for_update().filter(email=email).first()
    if user is None:
        user = User.objects.create_user(email=email, password=password)
    elif user.is_verified:
        User().set_password(password)  # same work and answer as a new signup: no enumeration
        return
    else:
        user.set_password(password)
        user.save(update_fields=["password"])
    _issue_code(user)


@transaction.atomic
def user_resend_code(*, email: str) -> None:
    user = (
        User.objects.select_for_update()
        .filter(email=normalize_email(email), is_verified=False)
        .first()
    )
    if user is None:
        return
    previous = EmailCode.objects.filter(user=user).first()
    if previous and clock.now() - previous.sent_at < settings.OTP_RESEND_INTERVAL:
        return
    _issue_code(user)


INVALID_CODE = ServiceError("invalid_code", "The code is wrong or has expired.", status_code=400)


def user_verify_email(*, email: str, code: str) -> User:
    with transaction.atomic():
        user = User.objects.filter(email=normalize_email(email)).first()
        entry = EmailCode.objects.select_for_update().filter(user=user).first() if user else None
        if entry is None:
            raise INVALID_CODE
        if entry.failed_attempts >= settings.OTP_MAX_ATTEMPTS or entry.expires_at <= clock.now():
            raise INVALID_CODE
        if not hmac.compare_digest(entry.code_hash, _hash_code(user, code)):
            entry.failed_attempts += 1
            entry.save(update_fields=["failed_attempts"])
            # Commit the failed try before answering, so the 5-try limit holds.
        else:
            entry.delete()
            user.is_verified = True
            user.save(update_fields=["is_verified"])
            return user
    raise INVALID_CODE


def user_authenticate(*, email: str, password: str) -> User:
    user = User.objects.filter(email=normalize_email(email)).first()
    if user is None:
        # Hash anyway, so an unknown email takes as long as a wrong password.
        User().set_password(password)
        raise INVALID_CREDENTIALS
    if not user.check_password(password) or not user.is_active:
        raise INVALID_CREDENTIALS
    if not user.is_verified:
        raise ServiceError(
            "email_not_verified", "Verify your email address before logging in.", status_code=403
        )
    return user


def token_for(user: User) -> AccessToken:
    return AccessToken.for_user(user)


def token_revoke(token: AccessToken) -> None:
    expires_at = datetime.fromtimestamp(token["exp"], tz=UTC)
    RevokedToken.objects.get_or_create(jti=token["jti"], defaults={"expires_at": expires_at})


def revoked_tokens_purge() -> int:
    deleted, _ = RevokedToken.objects.filter(expires_at__lte=clock.now()).delete()
    return deleted


def user_update_profile(
    *, user: User, name: str | None = None, onboarding_complete: bool | None = None
) -> User:
    if name is not None:
        user.name = name
    if onboarding_complete is not None:
        user.onboarding_complete = onboarding_complete
    user.save(update_fields=["name", "onboarding_complete"])
    return user


def usage_reset(*, user: User) -> None:
    from accounts import quota

    quota.reset(user)


def token_revoke_if_valid(raw: str | None) -> None:
    """Logout: revoke the presented token; an invalid or revoked one needs nothing."""
    from rest_framework.exceptions import AuthenticationFailed

    from accounts.authentication import validated_token

    if not raw:
        return
    try:
        token_revoke(validated_token(raw))
    except AuthenticationFailed:
        return
