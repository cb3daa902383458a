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
import os
import re
import tempfile
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.files import File
from django.core.files.storage import Storage, storages
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce

from audit.services import Target, record
from core import clock, crypto
from core.errors import ServiceError
from files import sealing
from files.models import StorageUsage, StoredFile
from files.receiving import Received, ReceivedFile
from forms_app.models import Form

logger = logging.getLogger(__name__)

DELETE_BATCH = 500


def storage() -> Storage:
    return storages["uploads"]


STORAGE_RETRY_AFTER_SECONDS = 60


def storage_unavailable() -> ServiceError:
    """The store failed a write or a read (a full disk, an unwritable folder, an unreachable S3
    store): nothing of the submission is kept, and the client is told when to try again."""
    return ServiceError("storage_unavailable",
                        "File storage is unavailable right now. Please try again shortly.", 503,
                        headers={"Retry-After": str(STORAGE_RETRY_AFTER_SECONDS)})


def quota_exceeded(field_name: str) -> ServiceError:
    return ServiceError("storage_quota_exceeded",
                        "The form's account has no room left for these files.", 413,
                        {field_name: "is past the account's storage quota"})


def storage_reserve(*, owner_id, size: int) -> bool:
    """Take ``size`` bytes of the owner's quota in one conditional UPDATE: concurrent uploads
    are ordered by the row's lock, so together they never pass the quota."""
    if _take(owner_id, size):
        return True
    # The account's first upload: its row is made once, by whoever comes first (the others'
    # inserts wait for it, then do nothing). Only once the row surely exists does an UPDATE
    # that takes nothing mean "no room": asking whether the row exists after a first UPDATE
    # found none saw the row another first upload had just made, and refused with room left.
    StorageUsage.objects.bulk_create([StorageUsage(owner_id=owner_id)], ignore_conflicts=True)
    return _take(owner_id, size)


def _take(owner_id, size: int) -> bool:
    room = Coalesce(F("quota"), Value(settings.DEFAULT_STORAGE_QUOTA_BYTES)) - size
    return bool(StorageUsage.objects.filter(owner_id=owner_id, used__lte=room).update(
        used=F("used") + size))


def storage_give_back(*, owner_id, size: int) -> None:
    StorageUsage.objects.filter(owner_id=owner_id).update(used=F("used") - size)


@transaction.atomic
def storage_quota_set(*, owner, quota: int | None, actor=None) -> None:
    """An operator's quota for ``owner`` (None: the default). Only the quota column is
    written: uploads move ``used`` meanwhile, and a save of the whole row would write back
    the value read before them. The row is made first if the account has none, as an
    upload makes it, so a first upload at the same moment keeps its bytes."""
    StorageUsage.objects.bulk_create([StorageUsage(owner_id=owner.pk)], ignore_conflicts=True)
    StorageUsage.objects.filter(owner_id=owner.pk).update(quota=quota)
    record(owner_id=owner.pk, actor=actor, action="storage.quota_changed",
           target=Target("storage", owner.pk, owner.email), details={"quota": quota})


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
    if not storage_reserve(owner_id=form.counted_on_id, size=total):
        raise quota_exceeded(received.files[0].field)
    keys: list[str] = []
    rows: list[StoredFile] = []
    try:
        for position, item in enumerate(received.files):
            # Named before the write, so a write that fails halfway is removed with the rest.
            keys.append(_key(form.counted_on_id))
            keys[-1] = _write(keys[-1], item)
            rows.append(StoredFile(
                owner_id=form.counted_on_id, form_id=form.pk, submission_id=submission_id,
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
        storage_give_back(owner_id=form.counted_on_id, size=total)
        raise


def _write(key: str, item: ReceivedFile) -> str:
    """Store one file under ``key``; the name it was stored under. Whatever the store raises
    (ENOSPC, EACCES, a connection refused) is a storage failure: a 503, never a 500."""
    content = File(item.data)
    content.size = item.data.seek(0, os.SEEK_END)  # sealed: longer than the file as sent
    try:
        return storage().save(key, content)
    except Exception as error:
        logger.warning("Could not store an uploaded file: %r", error)
        raise storage_unavailable() from error


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


@transaction.atomic
def file_delete(*, file_id, actor=None) -> bool:
    """Delete one stored file on its own (an operator, in the admin): its row, its bytes
    from the quota, its object once this commits; ``file.deleted`` in the owner's log, with
    its name and size (never its content). Whether it was still there: the row is locked
    first, as ``_delete_batch`` locks, so two deletions of one file give its bytes back once."""
    row = StoredFile.objects.select_for_update().filter(pk=file_id).first()
    if row is None:
        return False
    StoredFile.objects.filter(pk=row.pk).delete()  # keeps ``row`` whole for the entry
    storage_give_back(owner_id=row.owner_id, size=row.size)
    record(owner_id=row.owner_id, actor=actor, action="file.deleted",
           target=Target("file", row.pk, row.name), details={"name": row.name, "size": row.size})
    return True


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


# Past any request's life (every request ends within 30 s of being read; the files are
# written after the body is read, their rows right after), with room for clocks apart.
ORPHAN_OBJECT_AGE = timedelta(hours=1)
SWEEP_BATCH = 500


def orphan_objects_sweep(*, older_than: timedelta = ORPHAN_OBJECT_AGE) -> int:
    """Remove stored objects that no row names and that are older than ``older_than``: what a
    web process killed while writing a submission's files left behind (its rows are written
    after the files, and a request that fails removes its own). How many went.

    A file younger than the bound may belong to a request still writing, and one with a row
    belongs to a submission: neither is touched. A store that cannot be listed is logged and
    swept at the next run."""
    cutoff = clock.now() - older_than
    removed = 0
    try:
        for batch in _batches(_stored_keys(), SWEEP_BATCH):
            named = set(StoredFile.objects.filter(key__in=batch).values_list("key", flat=True))
            unnamed = [key for key in batch if key not in named]
            removed += _remove_older(unnamed, cutoff)
    except Exception:
        logger.exception("Could not sweep the storage for orphaned files")
    return removed


# What ``_key`` names, and nothing else: a folder's lost+found, or anything an operator put
# beside the files, is never listed, so never removed.
OUR_NAME = re.compile(r"[0-9a-f]{32}")


def _stored_keys() -> Iterator[str]:
    """Every object named as ``_key`` names them: ``<owner>/<random id>``."""
    store = storage()
    try:
        owners, _ = store.listdir("")
    except FileNotFoundError:  # the folder is made by the first upload
        return
    for owner in filter(OUR_NAME.fullmatch, owners):
        _, names = store.listdir(owner)
        yield from (f"{owner}/{name}" for name in names if OUR_NAME.fullmatch(name))


def _batches(keys: Iterator[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for key in keys:
        batch.append(key)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _remove_older(keys: list[str], cutoff: datetime) -> int:
    old = []
    for key in keys:
        try:
            if storage().get_modified_time(key) < cutoff:
                old.append(key)
        except FileNotFoundError:  # gone meanwhile
            continue
    # Checked again just before: a row may have been written since the batch was read.
    named = set(StoredFile.objects.filter(key__in=old).values_list("key", flat=True))
    old = [key for key in old if key not in named]
    _remove(old)
    if old:
        logger.warning("Removed %d stored files that no submission names", len(old))
    return len(old)


@dataclass
class Resealed:
    sealed: int = 0  # plaintext files from before 1.2.0, now sealed
    rekeyed: int = 0  # sealed under an older key, now under the first
    failed: int = 0  # missing, changed, under a key no longer configured, or not writable


def files_reencrypt() -> Resealed:
    """Seal every stored file under the first FIELD_ENCRYPTION_KEYS key: plaintext ones (from
    before 1.2.0) and those sealed under an older key. Each is written under a new name and its
    row moved to it only if the row still names the old one, so a file deleted meanwhile
    leaves nothing behind, and a run stopped halfway is simply run again. A file that cannot
    be read or written is logged, counted and left as it is."""
    done = Resealed()
    current = crypto.file_keys()[0].id
    rows = StoredFile.objects.order_by("pk").values_list("pk", "owner_id", "key", "sha256")
    for pk, owner_id, key, sha256 in rows.iterator():
        try:
            with closing(sealing.opened(storage().open(key, "rb"), sha256=sha256)) as handle:
                if handle.key_id == current:
                    continue
                was_plain = handle.key_id is None
                _reseal(pk, owner_id, key, handle)
        except Exception as error:
            logger.error("Could not re-encrypt stored file %s: %r", pk, error)
            done.failed += 1
            continue
        if was_plain:
            done.sealed += 1
        else:
            done.rekeyed += 1
    return done


def _reseal(pk, owner_id, key: str, handle: sealing.Opened) -> None:
    new_key = _key(owner_id)  # named first, so a write that fails halfway is removed
    try:
        with tempfile.TemporaryFile() as spool:
            sealer = sealing.Sealer()
            while chunk := handle.read(sealing.CHUNK_BYTES):
                spool.write(sealer.update(chunk))
            spool.write(sealer.finish())
            new_key = storage().save(new_key, File(spool))
    except BaseException:
        _remove([new_key])
        raise
    moved = StoredFile.objects.filter(pk=pk, key=key).update(key=new_key)
    _remove([key] if moved else [new_key])
