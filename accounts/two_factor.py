"""Two-step sign-in: time codes (TOTP, RFC 6238, through pyotp) and single-use recovery codes.

A time code is accepted in its 30-second step or the one either side (clock drift), and only
once: the last accepted step is kept, and a code of that step or an earlier one is refused,
so a code seen over a shoulder cannot be replayed. Recovery codes are 10 random codes, stored
as keyed hashes, each struck off when used."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

import pyotp
from django.conf import settings
from django.db import transaction

from accounts import signin_guard
from accounts.audited import account_audit
from accounts.device import Client
from accounts.models import TwoFactor, User
from core import crypto
from core.errors import ServiceError

ISSUER = "FormFlow"
RECOVERY_CODES = 10
DRIFT_STEPS = 1


def invalid_otp(status_code: int = 401) -> ServiceError:
    return ServiceError("invalid_otp", "The two-step code is wrong or was used already.",
                        status_code=status_code)


def otp_required() -> ServiceError:
    return ServiceError("otp_required", "Enter the code from your authenticator app (or a "
                        "recovery code) as otp.", status_code=401)


def is_enabled(user: User) -> bool:
    return TwoFactor.objects.filter(user=user, enabled=True).exists()


def _totp(entry: TwoFactor) -> pyotp.TOTP:
    return pyotp.TOTP(crypto.decrypt(entry.sealed_secret))


def _matching_step(entry: TwoFactor, code: str) -> int | None:
    """The time step whose code this is (now, or one step either side), if any."""
    if not (code.isascii() and code.isdigit()):
        return None  # a time code is digits; anything else is simply wrong
    totp = _totp(entry)
    now = int(time.time())
    current = totp.timecode(now)
    for step in range(current - DRIFT_STEPS, current + DRIFT_STEPS + 1):
        if hmac.compare_digest(totp.generate_otp(step), code):
            return step
    return None


def _recovery_hash(user: User, code: str) -> str:
    message = f"recovery:{user.pk}:{_normalized(code)}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


def _normalized(code: str) -> str:
    return "".join(code.split()).replace("-", "").lower()


def setup(*, user: User) -> tuple[str, str]:
    """A new secret waiting for its first code: ``(secret, otpauth URI)``."""
    if is_enabled(user):
        raise ServiceError("two_factor_enabled",
                           "Two-step sign-in is on already; turn it off first.")
    secret = pyotp.random_base32()
    TwoFactor.objects.update_or_create(
        user=user, defaults={"sealed_secret": crypto.encrypt(secret), "enabled": False,
                             "last_step": 0, "recovery_hashes": []},
    )
    uri = pyotp.TOTP(secret).provisioning_uri(name=user.email, issuer_name=ISSUER)
    return secret, uri


def pending(user: User) -> tuple[str, str] | None:
    """The secret a set-up is waiting to confirm, with its otpauth URI; None if there is none."""
    entry = TwoFactor.objects.filter(user=user, enabled=False).first()
    if entry is None:
        return None
    secret = crypto.decrypt(entry.sealed_secret)
    return secret, pyotp.TOTP(secret).provisioning_uri(name=user.email, issuer_name=ISSUER)


@transaction.atomic
def enable(*, user: User, code: str) -> list[str]:
    """Confirm the set-up with a current code; the recovery codes, shown this once. Every
    other token of the account is revoked."""
    entry = TwoFactor.objects.select_for_update().filter(user=user, enabled=False).first()
    step = _matching_step(entry, code.strip()) if entry else None
    if entry is None or step is None:
        raise invalid_otp(status_code=400)
    codes = [_new_recovery_code() for _ in range(RECOVERY_CODES)]
    entry.enabled = True
    entry.last_step = step
    entry.recovery_hashes = [_recovery_hash(user, c) for c in codes]
    entry.save(update_fields=["enabled", "last_step", "recovery_hashes"])
    user.revoke_tokens()
    account_audit(user, "account.two_factor_enabled")
    return codes


def _new_recovery_code() -> str:
    raw = secrets.token_hex(5)
    return f"{raw[:5]}-{raw[5:]}"


@transaction.atomic
def disable(*, user: User, password: str, code: str, client: Client | None = None) -> None:
    """Turn it off with the password and a code (time or recovery); revokes every token.
    Both are guesses a stolen session could make: they count as failed sign-ins, under the
    same limits as the sign-in pages (accounts/signin_guard.py)."""
    client = client or Client("")
    signin_guard.check(user.email, client, user)
    if not user.check_password(password):
        signin_guard.failed(user.email, client, user)
        raise ServiceError("validation_error", "Some fields are not valid.",
                           details={"password": "The password is incorrect."})
    if not is_enabled(user):
        raise ServiceError("two_factor_disabled", "Two-step sign-in is not on.")
    if not accept(user, code):
        signin_guard.failed(user.email, client, user)
        raise invalid_otp(status_code=400)
    TwoFactor.objects.filter(user=user).delete()
    user.revoke_tokens()
    account_audit(user, "account.two_factor_disabled")


@transaction.atomic
def accept(user: User, code: str) -> bool:
    """Whether ``code`` is a time code not used yet, or an unused recovery code (struck off)."""
    entry = TwoFactor.objects.select_for_update().filter(user=user, enabled=True).first()
    if entry is None:
        return False
    step = _matching_step(entry, code.strip())
    if step is not None:
        # Conditional, so two requests with one code cannot both pass.
        return TwoFactor.objects.filter(pk=entry.pk, last_step__lt=step).update(
            last_step=step) == 1
    digest = _recovery_hash(user, code)
    if digest in entry.recovery_hashes:
        entry.recovery_hashes = [h for h in entry.recovery_hashes if h != digest]
        entry.save(update_fields=["recovery_hashes"])
        return True
    return False


def recovery_codes_left(user: User) -> int:
    entry = TwoFactor.objects.filter(user=user, enabled=True).first()
    return len(entry.recovery_hashes) if entry else 0
