from __future__ import annotations

from django.conf import settings
from django.db import models

from core.ids import IdField
from forms_app.models import Form

READ = "read"
HOOKS = "hooks"
SCOPES = (READ, HOOKS)


class ApiKey(models.Model):
    """A key for the pull API (scope ``read``) and, with scope ``hooks``, for REST hook
    subscriptions. Only its SHA-256 is stored, never the key."""

    id = IdField()
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=32)
    key_hash = models.CharField(max_length=64, unique=True)
    forms = models.ManyToManyField(Form, related_name="api_keys", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Space-separated, in SCOPES order; always holds "read".
    scopes = models.CharField(max_length=100, default=READ, db_default=READ)

    class Meta:
        verbose_name = "API key"
        indexes = [models.Index(fields=["owner", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def scope_list(self) -> list[str]:
        return self.scopes.split()
