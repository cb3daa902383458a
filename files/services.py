"""Storing a submission's files, with the account's quota, and deleting them with it.

Every path that deletes submissions (the owner's delete, retention, the spam purge, a form's
delete, erasure by address) calls ``delete_files_of`` with their ids: it deletes the files'
rows and gives their bytes back to the quota. A file's object leaves the store only once the
deletion of its row has committed (``file_row_deleted``), whichever way the row went (an
account deleted in the admin cascades to its rows): a rolled-back deletion keeps its files,
and no object is left behind that no row names (the orphan purge looks for rows).
"""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.conf import settings
from django.core.files import File
from django.core.files.storage import Storage, storages
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce

from core.errors import ServiceError
from files.models import StorageUsage, StoredFile
from files.receiving import Received
from forms_app.models import Form

logger = logging.getLogger(__name__)

DELETE_BATCH = 500


def storage() -> Storage:
    return storages["uploads"]


def quota_exceeded(field_name: str) -> ServiceError:
    return ServiceError("storage_quota_exceeded",
                        "The form's account has no room left for these files.", 413,
                        {field_name: "is past the account's storage quota"})


def storage_reserve(*, owner_id, size: int) -> bool:
    """Take ``size`` bytes of the owner's quota in one conditional UPDATE: concurrent uploads
    are ordered by the row's lock, so together they never pass the quota."""
    room = Coalesce(F("quota"), Value(settings.DEFAULT_STORAGE_QUOTA_BYTES)) - size
    for _ in range(2):
        taken = StorageUsage.objects.filter(owner_id=owner_id, used__lte=room).update(
            used=F("used") + size)
        if taken:
            return True
        if StorageUsage.objects.filter(owner_id=owner_id).exists():
            return False
        StorageUsage.objects.bulk_create([StorageUsage(owner_id=owner_id)],
                                         ignore_conflicts=True)
    return False


def storage_give_back(*, owner_id, size: int) -> None:
    StorageUsage.objects.filter(owner_id=owner_id).update(used=F("used") - size)


def _key(owner_id) -> str:
    # Our own random name: the client's file name is shown, never used as a path.
    return f"{uuid.UUID(str(owner_id)).hex}/{uuid.uuid4().hex}"


@contextmanager
def files_stored(*, form: Form, received: Received | None, submission_id) -> Iterator[None]:
    """Reserve the quota, store the files and record them, then run the block that stores
    the submission; if anything fails, nothing of it is left: no file, no row, no bytes."""
    if received is None or not received.files:
        yield
        return
    total = received.total_bytes
    if not storage_reserve(owner_id=form.owner_id, size=total):
        raise quota_exceeded(received.files[0].field)
    keys: list[str] = []
    rows: list[StoredFile] = []
    try:
        for position, item in enumerate(received.files):
            content = File(item.data)
            content.size = item.size
            keys.append(storage().save(_key(form.owner_id), content))
            rows.append(StoredFile(
                owner_id=form.owner_id, form_id=form.pk, submission_id=submission_id,
                field=item.field[:256], name=item.name[:255], size=item.size,
                content_type=item.content_type, sha256=item.sha256, key=keys[-1],
                position=position,
            ))
        StoredFile.objects.bulk_create(rows)
        yield
    except BaseException:
        # Only this request's rows: a request that took over an Idempotency-Key may find the
        # submission (and its files) stored by the first.
        StoredFile.objects.filter(pk__in=[row.pk for row in rows]).delete()
        _remove(keys)
        storage_give_back(owner_id=form.owner_id, size=total)
        raise


def delete_files_of(submission_ids: Iterable) -> int:
    """Delete the files of these submissions from storage and give their bytes back to the
    quota; how many files went. Safe to call twice, or for submissions without files."""
    ids = list(submission_ids)
    removed = 0
    for start in range(0, len(ids), DELETE_BATCH):
        removed += _delete_batch(ids[start:start + DELETE_BATCH])
    return removed


def _delete_batch(submission_ids: list) -> int:
    with transaction.atomic():
        # Locked, so two paths deleting the same files give their bytes back once.
        rows = list(StoredFile.objects.select_for_update()
                    .filter(submission_id__in=submission_ids)
                    .values_list("pk", "owner_id", "key", "size"))
        if not rows:
            return 0
        StoredFile.objects.filter(pk__in=[pk for pk, _, _, _ in rows]).delete()
        freed: dict = defaultdict(int)
        for _, owner_id, _, size in rows:
            freed[owner_id] += size
        for owner_id, size in freed.items():
            storage_give_back(owner_id=owner_id, size=size)
    return len(rows)


def file_row_deleted(sender, instance: StoredFile, **kwargs) -> None:
    """post_delete of a StoredFile row (files/apps.py): its object goes after commit."""
    key = instance.key
    transaction.on_commit(lambda: _remove([key]), robust=True)


def _remove(keys: list[str]) -> None:
    for key in keys:
        try:
            storage().delete(key)
        except Exception:  # the row is gone either way; an operator sees the leftover
            logger.exception("Could not delete the stored file %s", key)
