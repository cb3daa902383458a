"""The audit log: who changed what, one row per change, written by the service that made the
change in its transaction (audit/services.py) and never changed after."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from core import clock
from core.ids import IdField

KEPT_DAYS = 400


class Entry(models.Model):
    id = IdField()
    at = models.DateTimeField(default=clock.now, editable=False)
    # The account whose log holds the entry. A team's entries will carry team_id instead.
    # An account deleted leaves its entries (an operator still reads them in the admin) until
    # their 400 days end: an operator who may delete an account may not thereby delete its log.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                              related_name="audit_entries", editable=False)
    team_id = models.UUIDField(null=True, blank=True, editable=False)
    # Who did it; the address stays when the account is gone. Null: the service itself (a
    # management command or a scheduled job).
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                              related_name="+", editable=False)
    actor_email = models.CharField(max_length=254, blank=True, editable=False)
    action = models.CharField(max_length=64, editable=False)
    target_type = models.CharField(max_length=32, editable=False)
    target_id = models.CharField(max_length=64, editable=False)
    target_name = models.CharField(max_length=200, blank=True, editable=False)
    details = models.JSONField(default=dict, blank=True, editable=False)

    class Meta:
        verbose_name_plural = "entries"
        indexes = [
            models.Index(fields=["owner", "-at", "-id"], name="audit_owner_newest"),
            models.Index(fields=["team_id", "-at", "-id"], name="audit_team_newest"),
            models.Index(fields=["at"], name="audit_at"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.target_type} {self.target_name or self.target_id}"
