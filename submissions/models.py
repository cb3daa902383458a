from __future__ import annotations

from typing import Any

from django.db import models

from config.dbtime import DatabaseNow
from config.ids import IdField
from forms_app.models import Form


class Submission(models.Model):
    id = IdField()
    # The composite index below leads with form, so the FK needs no index of its own.
    form = models.ForeignKey(
        Form, on_delete=models.CASCADE, related_name="submissions", db_index=False
    )
    # Stamped by the database in the INSERT. Submissions may commit in another order than
    # they were stamped; the pull API serves only rows below the commit horizon
    # (submissions/horizon.py), so a cursor never passes a row that commits later.
    submitted_at = models.DateTimeField(db_default=DatabaseNow())
    # [[name, value], ...] in submitted order: a JSON object would lose the order in jsonb.
    data = models.JSONField()
    ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=512, blank=True, default="")
    origin = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["form", "submitted_at", "id"], name="submission_form_time_id"),
        ]

    def __str__(self) -> str:
        return f"submission {self.pk}"

    @property
    def fields(self) -> dict[str, Any]:
        return dict(self.data)
