from __future__ import annotations

from datetime import date
from typing import ClassVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.crypto import salted_hmac

from core.ids import IdField
from core.infra.versions import VersionedQuerySet


def normalize_email(email: str) -> str:
    return email.strip().lower()


def current_month() -> date:
    now = timezone.now()
    return date(now.year, now.month, 1)


# Web processes keep what intake reads of a form's owner (forms_app/form_cache.py): every
# change renews a version token, update() included.
class UserManager(BaseUserManager.from_queryset(VersionedQuerySet)):  # type: ignore[misc]
    use_in_migrations = True

    def get_by_natural_key(self, email: str | None) -> User:
        return self.get(email=normalize_email(email or ""))

    def create_user(self, email: str, password: str | None = None, **extra) -> User:
        user = self.model(email=normalize_email(email), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **extra) -> User:
        extra.update(is_staff=True, is_superuser=True, is_verified=True)
        return self.create_user(email, password, **extra)


class User(AbstractBaseUser, PermissionsMixin):
    id = IdField()
    email = models.EmailField(unique=True)
    name = models.CharField(max_length=150, blank=True, default="")
    is_verified = models.BooleanField(default=False)
    onboarding_complete = models.BooleanField(default=False)
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False)
    date_joined = models.DateTimeField(default=timezone.now)
    # Null means DEFAULT_MONTHLY_SUBMISSION_LIMIT; an operator may set another.
    monthly_submission_limit = models.PositiveIntegerField(null=True, blank=True)
    # Submissions the owner has marked spam or not spam: the spam filter reads what the marks
    # taught it (submissions/learning.py) only once there is something to read.
    spam_marks = models.PositiveIntegerField(default=0, editable=False)
    # Every token carries the version it was issued under; raising it revokes them all.
    token_version = models.PositiveIntegerField(default=0, editable=False)
    # The IANA zone the dashboard shows times and search days in; empty until the owner's
    # browser says its zone (or the owner picks one), and UTC meanwhile.
    time_zone = models.CharField(max_length=64, blank=True, default="", db_default="")

    objects = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = []

    class Meta:
        constraints = [models.UniqueConstraint(Lower("email"), name="user_email_ci_unique")]

    def __str__(self) -> str:
        return self.email

    def save(self, *args, **kwargs) -> None:
        self.email = normalize_email(self.email)
        # set_password() was called (a reset, a change, the admin, manage.py changepassword):
        # tokens issued under the old password stop working. Django's transparent hash
        # upgrade clears _password before it saves, so it revokes nothing.
        if getattr(self, "_password", None) is not None and not self._state.adding:
            self.token_version += 1
            update_fields = kwargs.get("update_fields")
            if update_fields is not None:
                kwargs["update_fields"] = {*update_fields, "token_version"}
        super().save(*args, **kwargs)

    def _get_session_auth_hash(self, secret=None) -> str:
        """Django's session hash (the admin's sign-in) covers the token version as well as the
        password, so "log out everywhere" and two-step changes end admin sessions too."""
        return salted_hmac(
            "django.contrib.auth.models.AbstractBaseUser.get_session_auth_hash",
            f"{self.password}:{self.token_version}", secret=secret, algorithm="sha256",
        ).hexdigest()

    def revoke_tokens(self) -> None:
        """Every token issued so far gets 401 from now on."""
        User.objects.filter(pk=self.pk).update(token_version=models.F("token_version") + 1)
        self.refresh_from_db(fields=["token_version"])

    @property
    def effective_monthly_limit(self) -> int:
        if self.monthly_submission_limit is not None:
            return self.monthly_submission_limit
        return settings.DEFAULT_MONTHLY_SUBMISSION_LIMIT

    @property
    def monthly_submission_count(self) -> int:
        """Submissions counted this month (accounts/quota.py counts them)."""
        return UsageShard.objects.filter(user_id=self.pk, month=current_month()).total()


class UsageShardQuerySet(models.QuerySet):
    def total(self) -> int:
        """The count these shards add up to."""
        return self.aggregate(total=models.Sum("count"))["total"] or 0


class UsageShard(models.Model):
    """Part of an account's count of submissions in one calendar month (UTC).

    The count is the sum of the month's shards. Each submission adds one to a shard picked at
    random, inside its own transaction: concurrent submissions of one account then rarely wait
    for the same row, where a single counter row would make them commit one at a time.

    ``generation`` fences the Redis counter (submissions/intake/admission/): all of a month's
    shards carry the generation of the counter last seeded from them, and a submission
    admitted under another one is not stored.
    """

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="usage_shards")
    month = models.DateField()
    shard = models.PositiveSmallIntegerField()
    count = models.PositiveIntegerField(default=0)
    generation = models.BigIntegerField(default=0, db_default=0)

    objects = UsageShardQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "month", "shard"], name="usage_shard_unique")
        ]

    def __str__(self) -> str:
        return f"usage of {self.user_id} in {self.month:%Y-%m} (shard {self.shard})"


class CodePurpose(models.TextChoices):
    VERIFY = "verify", "Email verification"
    RESET = "reset", "Password reset"


class EmailCode(models.Model):
    """The one live code of a user for one purpose, stored as a keyed hash."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="email_codes")
    purpose = models.CharField(
        max_length=10, choices=CodePurpose.choices, default=CodePurpose.VERIFY
    )
    code_hash = models.CharField(max_length=64)
    expires_at = models.DateTimeField()
    # Unused since 1.1.0, kept for 1.0.0's code during an upgrade (docs/operating.md,
    # "Upgrades"); dropped in a later release.
    failed_attempts = models.PositiveSmallIntegerField(db_default=0)
    # Wrong tries from everyone: the code dies at 5. Their number is the sum of the values:
    # 1.2.0 writes one entry; 1.1.0, which may serve beside it during an upgrade, writes one
    # per client address, and resets it when it replaces a code, so both count alike.
    wrong_tries = models.JSONField(default=dict, db_default={}, blank=True)
    # The mailed link's token, as a SHA-256 digest, and the code it was minted with: the link
    # lives only while that code is the row's (a code replaced or used takes it along).
    link_hash = models.CharField(max_length=64, blank=True, default="", db_default="",
                                 db_index=True)
    link_code_hash = models.CharField(max_length=64, blank=True, default="", db_default="")
    sent_at = models.DateTimeField()
    # Sends to this address in the hour that began at send_window_start (at most 5).
    send_window_start = models.DateTimeField(null=True, blank=True)
    sends_in_window = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "purpose"], name="email_code_user_purpose")
        ]

    def __str__(self) -> str:
        return f"{self.get_purpose_display().lower()} code for {self.user_id}"

    def wrong_try_count(self) -> int:
        return sum(int(tries) for tries in self.wrong_tries.values())

    def count_wrong_try(self) -> None:
        self.wrong_tries = {"all": self.wrong_try_count() + 1}


class RevokedToken(models.Model):
    """JWT ids revoked by logout; kept until the token would have expired anyway."""

    jti = models.CharField(max_length=64, primary_key=True)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.jti


class MailerStatus(models.Model):
    """Whether account email (codes) could be sent lately: one row, written by the sender.

    Sign-up reads it so that it never claims a code was sent while the mail server refuses
    every message; the operator sees the last error in the admin.
    """

    id = models.PositiveSmallIntegerField(primary_key=True, default=1, editable=False)
    failing_since = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "mailer status"

    def __str__(self) -> str:
        return "failing" if self.failing_since else "sending"


class SignUpAttempt(models.Model):
    """A sign-up answered for an address not yet verified, written by the request itself.

    Verification reads every one of them, background work done or not: if they brought
    different passwords, none is trusted (contract, "no pre-hijacking"). The hash is salted
    per address (services.sign_up_password_hash), so equal passwords give equal text.
    """

    email = models.EmailField(db_index=True)
    password_hash = models.CharField(max_length=128)
    # The client address it came from (an IPv6 client's /64): a password is kept only for a
    # verifier at the address that chose it.
    client = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self) -> str:
        return f"sign-up for {self.email} at {self.created_at:%Y-%m-%d %H:%M}"


class TwoFactor(models.Model):
    """Two-step sign-in (TOTP, RFC 6238) of one account: its secret (sealed), whether it is on,
    the last time step accepted (a code is taken once) and the hashes of unused recovery codes.
    A row that is not enabled is a setup the owner has not confirmed with a code yet."""

    user = models.OneToOneField(User, on_delete=models.CASCADE, related_name="two_factor")
    sealed_secret = models.TextField()
    enabled = models.BooleanField(default=False)
    last_step = models.BigIntegerField(default=0)
    recovery_hashes = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"two-step sign-in of {self.user_id} ({'on' if self.enabled else 'set-up'})"


class Invitation(models.Model):
    """An operator's leave for one address to sign up while REGISTRATION is ``invite``
    (accounts/registration.py). Inviting again renews it."""

    email = models.EmailField(unique=True)
    invited_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.email} (until {self.expires_at:%Y-%m-%d %H:%M} UTC)"

    def save(self, *args, **kwargs) -> None:
        self.email = normalize_email(self.email)
        super().save(*args, **kwargs)
