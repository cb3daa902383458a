"""Account writes in the request: sign-up, codes, sign-in, passwords and token revocation.
What the sign-up, resend and forgot-password endpoints leave to the worker is in
background.py, queued through tasks.py."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.contrib.auth import password_validation
from django.contrib.auth.hashers import make_password
from django.core import signing
from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework_simplejwt.tokens import AccessToken

from accounts import background, codes, hooks, signin_guard, tasks, two_factor
from accounts.audited import account_audit
from accounts.authentication import TOKEN_VERSION_CLAIM
from accounts.device import Client
from accounts.models import (
    CodePurpose,
    EmailCode,
    RevokedToken,
    SignUpAttempt,
    User,
    current_month,
    normalize_email,
)
from core import clock, crypto
from core.errors import ServiceError, retry_later
from core.infra import ratelimit


def invalid_credentials() -> ServiceError:
    # A fresh error per request: one shared instance raised again keeps every traceback alive.
    return ServiceError(
        "invalid_credentials", "The email or password is incorrect.", status_code=401
    )


def validate_new_password(password: str, email: str, field: str = "password") -> None:
    try:
        password_validation.validate_password(password, user=User(email=email))
    except ValidationError as exc:
        raise ServiceError(
            "validation_error",
            "Some fields are not valid.",
            details={field: " ".join(exc.messages)},
        ) from None


WRONG_TRIES_PER_DAY = 20


# The account endpoints a stranger can call with any address (sign-up, resend, forgot) do the
# same work in the request whether or not the address has an account: they check the input,
# hash the password if there is one, and hand the rest to a task. Looking the address up,
# writing and mailing happen in the worker (background.py), where their time tells a caller
# nothing.


def user_sign_up(*, email: str, password: str, client: Client | None = None,
                 onward: str = "") -> None:
    """``onward``: a page of the dashboard the mailed link goes on to once it has signed in
    (the invitation that sent the person here), checked by the dashboard."""
    email = normalize_email(email)
    validate_new_password(password, email)
    password_hash = sign_up_password_hash(email, password)
    sign_up_record(email=email, password_hash=password_hash, client=client)
    # The worker gets the hash, sealed: the broker never sees the password.
    tasks.enqueue(tasks.sign_up, email, crypto.encrypt(password_hash), "",
                  background.seal(onward))


def sign_up_password_hash(email: str, password: str) -> str:
    """The password hash a sign-up carries, salted per address with a keyed salt: two sign-ups
    for one address compare equal exactly when their passwords are equal, and no password is
    ever kept. One hash, as a sign-in costs."""
    salt = hmac.new(
        settings.SECRET_KEY.encode(), f"sign-up-salt:{email}".encode(), hashlib.sha256
    ).hexdigest()[:32]
    return make_password(password, salt)


def sign_up_record(*, email: str, password_hash: str, client: Client | None = None) -> None:
    """Written in the request (an insert, whether or not the address has an account), so a
    verification sees every sign-up answered before it, its background work done or not."""
    SignUpAttempt.objects.create(email=email, password_hash=password_hash,
                                 client=client.address if client else "")


def _sign_ups_trusted(user: User, verifier: Client | None) -> bool:
    """Whether the account's password may stay: every sign-up for the address brought it, and
    the verifier is at a client address one of them came from. A stranger's sign-up that the
    owner then verifies from elsewhere (a code for a sign-up they never made) keeps no
    password; the owner sets one, as after sign-ups that disagreed."""
    rows = list(SignUpAttempt.objects.filter(email=user.email).values_list("password_hash",
                                                                           "client"))
    if not rows or {digest for digest, _ in rows} - {user.password}:
        # No record of who chose the password (an operator's unverified account, or one made
        # before sign-ups were recorded): nothing proves it is the verifier's.
        return False
    clients = {address for _, address in rows}
    return verifier is None or verifier.address in clients


def _pending_sign_up_matches(email: str, password: str) -> bool:
    digest = sign_up_password_hash(normalize_email(email), password)
    return SignUpAttempt.objects.filter(email=normalize_email(email), password_hash=digest).exists()


def _signed_up_with(email: str, password: str, user: User | None) -> bool:
    """Whether a sign-up on record for the address brought ``password``. With no account it
    is the one hash a sign-in costs; with one, it is hashed whenever the address has sign-ups
    on record, verified or not, so the time spent tells the two apart no more than the
    answer does."""
    if user is not None and not SignUpAttempt.objects.filter(email=user.email).exists():
        return False
    return _pending_sign_up_matches(email, password)


SIGN_UP_ATTEMPTS_KEPT = timedelta(days=30)


def user_resend_code(*, email: str, onward: str = "") -> None:
    tasks.enqueue(tasks.resend_code, normalize_email(email), "", background.seal(onward))


def user_forgot_password(*, email: str) -> None:
    tasks.enqueue(tasks.send_reset_code, normalize_email(email))


def invalid_code() -> ServiceError:
    return ServiceError("invalid_code", "The code is wrong or has expired.", status_code=400)


def too_many_attempts(retry_after: int) -> ServiceError:
    return retry_later(
        "too_many_attempts",
        "Too many wrong codes for this address today. Open the link in the email we sent "
        "you instead: it works however many wrong codes were tried.",
        retry_after,
    )


def invalid_link() -> ServiceError:
    return ServiceError("invalid_link", "This link has expired or was used already.",
                        status_code=404)


def _wrong_tries(email: str, purpose: str) -> ratelimit.Rolling:
    """Code tries for an address and purpose in the last 24 hours, from everyone."""
    digest = hashlib.sha256(email.encode()).hexdigest()[:32]
    return ratelimit.Rolling(f"codes-wrong:{purpose}:{digest}", 86400, slices=96)


def _use_code(email: str, code: str, purpose: str, on_success: Callable[[User], None]) -> User:
    """Check a code and, if right, consume it (its link too) and run ``on_success(user)`` in
    one transaction.

    One rule for everyone, whoever sends the try: a code dies after 5 wrong tries, and past 20
    tries for the address and purpose in the last 24 hours every try is refused (429) until
    enough of them are 24 hours old or the mailed link is used. The owner always has that
    link, which no wrong code stops, so the cap can be this tight. Every try is counted before
    it is checked, so concurrent tries cannot slip past the 20. The answers depend on nothing
    but the code itself, so they tell no one which addresses have an account."""
    email = normalize_email(email)
    tries_today = _wrong_tries(email, purpose)
    if tries_today.add() > WRONG_TRIES_PER_DAY:
        # A refused try is no guess: taken back, so the cap ends 24 h after the 20th try
        # however long strangers keep knocking.
        tries_today.undo()
        raise too_many_attempts(tries_today.retry_after(WRONG_TRIES_PER_DAY))
    with transaction.atomic():
        user = User.objects.filter(email=email).first()
        entry = (
            EmailCode.objects.select_for_update().filter(user=user, purpose=purpose).first()
            if user
            else None
        )
        usable = entry is not None and (
            entry.wrong_try_count() < settings.OTP_MAX_ATTEMPTS and entry.expires_at > clock.now()
        )
        if usable and user and entry and hmac.compare_digest(
            entry.code_hash, codes.hash_code(user, code, purpose)
        ):
            entry.delete()
            on_success(user)
            return user
        if entry is not None and usable:
            entry.count_wrong_try()
            entry.save(update_fields=["wrong_tries"])
            # Committed before answering, so the 5-try limit holds.
    raise invalid_code()


def link_target(token: str) -> tuple[str, str] | None:
    """What a live link is for (verify or reset) and the address it is for, or None: what
    its page shows, changing nothing (mail scanners open links). The address is shown so that
    no one presses a link someone else sent them and lands in that someone's account."""
    return (EmailCode.objects.filter(codes.live_link(token))
            .values_list("purpose", "user__email").first())


def _use_link(token: str, purpose: str, on_success: Callable[[User], None]) -> User:
    """Consume a live link (its code too) and run ``on_success(user)`` in one transaction.
    Wrong codes never stop it; using it lifts their cap for the address, whose inbox it
    proves."""
    with transaction.atomic():
        entry = (EmailCode.objects.select_for_update().select_related("user")
                 .filter(codes.live_link(token), purpose=purpose).first())
        # The delete decides, not the read: SQLite takes no row lock, and of two presses at
        # once only the one that deletes the row may go on.
        if entry is None or not EmailCode.objects.filter(pk=entry.pk).delete()[0]:
            raise invalid_link()
        user = entry.user
        on_success(user)
    for each in CodePurpose:
        _wrong_tries(user.email, each).clear()
    return user


def _verified(client: Client | None) -> Callable[[User], None]:
    def verified(user: User) -> None:
        # Sign-ups with different passwords: whichever is the owner's, none is trusted. The
        # verifier is signed in and sets a password (reset, or change-password without the
        # current one, which an account with no usable password allows).
        if not _sign_ups_trusted(user, client):
            user.set_unusable_password()
        user.is_verified = True
        user.save(update_fields=["is_verified", "password"])
        SignUpAttempt.objects.filter(email=user.email).delete()

    return verified


def user_verify_email(*, email: str, code: str, client: Client | None = None) -> User:
    return _use_code(email, code, CodePurpose.VERIFY, _verified(client))


def user_verify_by_link(*, token: str, client: Client | None = None) -> User:
    return _use_link(token, CodePurpose.VERIFY, _verified(client))


def _reset(password: str) -> Callable[[User], None]:
    def reset(user: User) -> None:
        user.set_password(password)
        user.is_verified = True
        user.save(update_fields=["password", "is_verified"])
        account_audit(user, "account.password_changed", {"how": "reset"})
        # A verification code and sign-ups still waiting are moot now: the inbox chose this.
        EmailCode.objects.filter(user=user, purpose=CodePurpose.VERIFY).delete()
        SignUpAttempt.objects.filter(email=user.email).delete()

    return reset


def user_reset_password(*, email: str, code: str, password: str) -> User:
    """Set a new password with a mailed code. The inbox is proven, so the address counts as
    verified; every token issued before is revoked (the password change does that)."""
    validate_new_password(password, normalize_email(email))
    return _use_code(email, code, CodePurpose.RESET, _reset(password))


def user_reset_by_link(*, token: str, password: str) -> User:
    """``user_reset_password`` with the mailed link instead of the code."""
    email = EmailCode.objects.filter(codes.live_link(token)).values_list("user__email",
                                                                         flat=True).first()
    validate_new_password(password, email or "")
    return _use_link(token, CodePurpose.RESET, _reset(password))


def user_change_password(
    *, user: User, current_password: str | None, new_password: str, client: Client | None = None
) -> User:
    """Change a signed-in user's password; every token issued before is revoked. An account
    with no usable password (sign-ups that disagreed) sets one without the current one."""
    if current_password is None and not user.has_usable_password():
        return _password_set(user, new_password)
    if current_password is None:
        raise ServiceError("validation_error", "Some fields are not valid.",
                           details={"currentPassword": "Enter your current password."})
    client = client or Client("")
    signin_guard.check(user.email, client, user)
    if not user.check_password(current_password):
        signin_guard.failed(user.email, client, user)
        raise ServiceError(
            "validation_error",
            "Some fields are not valid.",
            details={"currentPassword": "The current password is incorrect."},
        )
    return _password_set(user, new_password)


def _password_set(user: User, new_password: str) -> User:
    validate_new_password(new_password, user.email, field="newPassword")
    with transaction.atomic():
        user.set_password(new_password)
        user.save(update_fields=["password"])
        account_audit(user, "account.password_changed", {"how": "change"})
        # A reset asked for before the change (its code, its link) would undo it: whoever
        # saw that mail could still set the password for the rest of its 30 minutes.
        EmailCode.objects.filter(user=user, purpose=CodePurpose.RESET).delete()
    return user


def user_log_out_everywhere(*, user: User) -> None:
    user.revoke_tokens()


def user_authenticate(
    *, email: str, password: str, client: Client | None = None, otp: str | None = None
) -> User:
    """Check a sign-in; every surface calls this, so the failed-sign-in limits span them all.
    With two-step sign-in on, ``otp`` (a time code or a recovery code) must come too; a wrong
    one counts as a failed sign-in."""
    client = client or Client("")
    user = User.objects.filter(email=normalize_email(email)).first()
    signin_guard.check(email, client, user)
    # A password some sign-up for the address brought answers 403 as a pending sign-up does,
    # whatever the account: else signing up and then signing in told a verified account (401)
    # from a new one (403). Never a way in: the account's own password is checked first.
    pending = _signed_up_with(email, password, user)
    if user is None or not user.check_password(password) or not user.is_active:
        if pending:
            raise email_not_verified()
        signin_guard.failed(email, client, user)
        raise invalid_credentials()
    if not user.is_verified:
        raise email_not_verified()
    _second_step(user, email, client, otp)
    return user


# The dashboard's two-step page carries the password step's result as a signed ticket:
# the account and its token version, good for 5 minutes.
SECOND_STEP_SALT = "formflow.accounts.second-step"
SECOND_STEP_SECONDS = 300


def second_step_ticket(email: str) -> str:
    """After a sign-in answered ``otp_required`` (the password was right): the ticket the
    two-step page posts back with the code."""
    user = User.objects.get(email=normalize_email(email))
    return signing.dumps([str(user.pk), user.token_version], salt=SECOND_STEP_SALT)


def user_authenticate_second_step(*, ticket: str, otp: str,
                                  client: Client | None = None) -> User:
    """The second step: the same code check and failed-sign-in limits as a one-step sign-in.
    A password change or a sign-out everywhere since the first step ends the sign-in."""
    client = client or Client("")
    try:
        user_id, version = signing.loads(ticket, salt=SECOND_STEP_SALT,
                                         max_age=SECOND_STEP_SECONDS)
    except (signing.BadSignature, ValueError, TypeError):
        raise sign_in_expired() from None
    user = User.objects.filter(pk=user_id, is_active=True, is_verified=True).first()
    if user is None or user.token_version != version:
        raise sign_in_expired()
    signin_guard.check(user.email, client, user)
    _second_step(user, user.email, client, otp)
    return user


def sign_in_expired() -> ServiceError:
    return ServiceError("sign_in_expired", "This sign-in has expired. Enter your password "
                        "again.", status_code=400)


def _second_step(user: User, email: str, client: Client, otp: str | None) -> None:
    if not two_factor.is_enabled(user):
        return
    if not otp:
        raise two_factor.otp_required()
    if not two_factor.accept(user, otp):
        signin_guard.failed(email, client, user)
        raise two_factor.invalid_otp()


def email_not_verified() -> ServiceError:
    return ServiceError(
        "email_not_verified", "Verify your email address before logging in.", status_code=403
    )


def token_for(user: User) -> AccessToken:
    token = AccessToken.for_user(user)
    token[TOKEN_VERSION_CLAIM] = user.token_version
    return token


def token_revoke(token: AccessToken) -> None:
    expires_at = datetime.fromtimestamp(token["exp"], tz=UTC)
    RevokedToken.objects.get_or_create(jti=token["jti"], defaults={"expires_at": expires_at})


def revoked_tokens_purge() -> int:
    deleted, _ = RevokedToken.objects.filter(expires_at__lte=clock.now()).delete()
    return deleted


def sign_up_attempts_purge() -> int:
    """Old sign-ups of addresses that have no account. Those of an account are kept however
    old: an unverified account's are the only proof of whose password it holds (verification
    trusts none without them), and a verified one's make its sign-in answer 403 to their
    passwords for as long as a new account's would."""
    cutoff = clock.now() - SIGN_UP_ATTEMPTS_KEPT
    waiting = User.objects.values("email")
    deleted, _ = (SignUpAttempt.objects.filter(created_at__lt=cutoff)
                  .exclude(email__in=waiting).delete())
    return deleted


@transaction.atomic
def user_update_profile(
    *, user: User, name: str | None = None, onboarding_complete: bool | None = None
) -> User:
    """The account's name is in its own log when it changes; the onboarding mark, the
    dashboard's note of a first visit finished, is not a setting and is not."""
    renamed = name is not None and name != user.name
    if name is not None:
        user.name = name
    if onboarding_complete is not None:
        user.onboarding_complete = onboarding_complete
    user.save(update_fields=["name", "onboarding_complete"])
    if renamed:
        account_audit(user, "account.changed", {"changed": ["name"]})
    return user


def usage_reset(*, user: User) -> None:
    # The record back to zero under a new generation, and the counter to the requests still
    # running and not stored, exactly (intake's admission, registered on the hook): never
    # deleted, so one of them giving its reservation back cannot take it below zero; one of
    # them that stores is fenced off by the new generation and admitted again under this
    # counter.
    hooks.usage_reset(user.pk, current_month())


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
