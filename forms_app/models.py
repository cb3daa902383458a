from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

from core import crypto
from core.ids import IdField
from core.infra.versions import VersionedQuerySet

DEFAULT_RATE_LIMIT = 10


def new_slug() -> str:
    """12 random URL-safe characters: never sequential, never guessable.

    The first is a letter or digit, so a slug never reads as an option on a command line
    (``retry_deliveries --form -x3...``)."""
    while True:
        slug = secrets.token_urlsafe(9)
        if slug[0].isalnum():
            return slug


class CaptchaProvider(models.TextChoices):
    # The names submissions/intake/captcha.py knows: the widget's field and the verify URL of each.
    RECAPTCHA = "recaptcha", "reCAPTCHA"
    HCAPTCHA = "hcaptcha", "hCaptcha"
    TURNSTILE = "turnstile", "Cloudflare Turnstile"


class Form(models.Model):
    id = IdField()
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="forms"
    )
    # Null: the owner's own form. Else the team's: its members reach it by their role
    # (forms_app/access.py), and ``owner`` stays the member who made it. A team with forms
    # cannot be deleted.
    team = models.ForeignKey(
        "teams.Team", on_delete=models.PROTECT, null=True, blank=True, related_name="forms"
    )
    # Whose monthly limit, file storage and spam learning the form's submissions count on:
    # the owner for their own form, the team's account of record for a team's (kept in step
    # by forms_app/services.py and teams/services.py), so the public endpoint reads it with
    # the form in its one statement. An account of record cannot be deleted while a team's
    # forms count on it (RESTRICT): an owner hands it on first; one's own forms go with it.
    # Null in a form that 1.1.0's code made while 1.2.0 was being rolled out: read
    # ``counted_on``, which is then the owner.
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.RESTRICT, null=True, editable=False,
        related_name="+",
    )
    # Random by default; an owner may choose one (4 to 64 of A-Za-z0-9_-), so a form moved from
    # a hosted service keeps its address's last part (forms_app/serializers.py).
    slug = models.CharField(max_length=64, unique=True, default=new_slug, editable=False)
    name = models.CharField(max_length=200)
    redirect_url = models.URLField(max_length=2000, null=True, blank=True)
    allowed_origins = models.JSONField(default=list, blank=True)
    rate_limit = models.PositiveIntegerField(default=DEFAULT_RATE_LIMIT)
    honeypot_field = models.CharField(max_length=100, null=True, blank=True)
    captcha_provider = models.CharField(
        max_length=20, choices=CaptchaProvider.choices, default=CaptchaProvider.RECAPTCHA
    )
    # The secret of whichever provider, encrypted with FIELD_ENCRYPTION_KEYS; empty means
    # CAPTCHA is off.
    recaptcha_secret_encrypted = models.TextField(blank=True, default="")
    # The spam filter (submissions/intake/spam.py): on unless the owner turns it off; blockedWords
    # are words or phrases, matched case-insensitively.
    spam_filter = models.BooleanField(default=True)
    blocked_words = models.JSONField(default=list, blank=True)
    # Submissions older than this many days are deleted (contract, "Submission lifecycle");
    # null keeps them for good.
    retention_days = models.PositiveIntegerField(null=True, blank=True)
    # File uploads (contract, "File uploads"): null keeps no file, only its placeholder; else
    # {"maxBytes", "maxFiles", "types"}, within limits.py (files/receiving.py holds uploads
    # to them).
    file_uploads = models.JSONField(null=True, blank=True)
    # Each submission that reaches the inbox is emailed to the owner through the operator's
    # mail settings (integrations/kinds/owner_email/); its delivery's integration row is on
    # while this is.
    notify_owner = models.BooleanField(default=True, db_default=True)
    # Field rules (contract, "Field rules"; forms_app/field_rules.py): null takes any fields;
    # else a list of rules every submission is checked against (submissions/intake/rules.py).
    # Without extras, a field no rule names is refused; extras matter only with a list.
    field_rules = models.JSONField(null=True, blank=True)
    allow_extra_fields = models.BooleanField(default=True, db_default=True)
    # Every field name the form has stored, in order of first appearance (at most 500 new
    # ones are taken: contract, "Input limits"). Written only when a submission brings a name
    # the form has not seen, so the usual submission reads it and writes nothing.
    field_names = models.JSONField(default=list, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Web processes keep forms (forms_app/form_cache.py): every change renews a version token.
    objects = VersionedQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["owner", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.slug})"

    # The folders' sizes, never kept in this row: a counter here made every submission of a
    # form wait for the one before it. submissions/folders.py counts them, and
    # submissions.selectors.with_folder_sizes() sets these on the forms it is given, as an
    # annotation of a query would (forms_app's own API and admin ask it through
    # forms_app/hooks.py).
    submission_count: int  # the inbox's size
    spam_count: int

    @property
    def counted_on_id(self):
        return self.account_id or self.owner_id

    @property
    def counted_on(self):
        """The user ``account`` names, or the owner (see ``account``)."""
        return self.account or self.owner

    @property
    def account_wide_owner_id(self):
        """Whose account-wide integrations (those with no form) receive this form's
        submissions: its owner's for their own form; nobody's for a team's, which receives
        only the integrations made on it."""
        return self.owner_id if self.team_id is None else None

    @property
    def endpoint(self) -> str:
        return f"{settings.BASE_URL}/api/v1/f/{self.slug}"

    @property
    def recaptcha_enabled(self) -> bool:
        return bool(self.recaptcha_secret_encrypted)

    @property
    def recaptcha_secret(self) -> str:
        if not self.recaptcha_secret_encrypted:
            return ""
        return crypto.decrypt(self.recaptcha_secret_encrypted)

    def set_recaptcha_secret(self, secret: str | None) -> None:
        self.recaptcha_secret_encrypted = crypto.encrypt(secret) if secret else ""
