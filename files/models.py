"""Uploaded files of forms that opt in (contract, "File uploads"), and each account's use of
its storage quota."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from core.ids import IdField
from core.infra.dbtime import DatabaseNow


class StoredFile(models.Model):
    """One file of one submission. ``submission_id`` is not a foreign key: the file's row is
    written (with its quota) before the submission's, so the submission's deliveries find it,
    and a submission is never deleted without ``delete_files_of`` (files/services.py)."""

    id = IdField()
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              db_index=False)
    form_id = models.UUIDField(db_index=True)
    submission_id = models.UUIDField(db_index=True)
    field = models.CharField(max_length=256)
    name = models.CharField(max_length=255)  # as the client sent it: shown, never a path
    size = models.BigIntegerField()
    content_type = models.CharField(max_length=100)  # sniffed from the bytes
    sha256 = models.CharField(max_length=64)
    key = models.CharField(max_length=200)  # the name in storage: ours, random
    position = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(db_default=DatabaseNow())

    def __str__(self) -> str:
        return f"{self.name} ({self.size} bytes)"


class StorageUsage(models.Model):
    """Bytes of stored files per account. Reserved by one conditional UPDATE before a file is
    stored, so concurrent uploads never pass the quota; given back when files are deleted."""

    owner = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                 primary_key=True, related_name="storage_usage")
    used = models.BigIntegerField(default=0)
    # An operator's own quota for this account; null: DEFAULT_STORAGE_QUOTA_BYTES.
    quota = models.BigIntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.used} bytes used"

    @property
    def limit(self) -> int:
        return settings.DEFAULT_STORAGE_QUOTA_BYTES if self.quota is None else self.quota
