"""Reads of stored files: a submission's ``files`` in every shape, and an account's usage.

``files`` is in a submission's shape when its form has uploads on, or still keeps files from
when it had (docs/uploads.md): a form that never took files keeps the shape spec.md shows.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.conf import settings

from files import links
from files.models import StorageUsage, StoredFile
from forms_app.models import Form


def shown(form: Form | None = None, *, form_id=None) -> bool:
    """Whether the form's submissions carry ``files``.

    A form read with a batch of rows may carry the answer already (``keeps_files``, read in
    the same statement with ``keeps_files_sql``): a delivery worker asks for every delivery,
    and a query each cost it a third of its time."""
    if form is not None:
        if form.file_uploads is not None:
            return True
        known = getattr(form, "keeps_files", None)
        if known is not None:
            return bool(known)
        form_id = form.pk
    elif Form.objects.filter(pk=form_id, file_uploads__isnull=False).exists():
        return True
    return StoredFile.objects.filter(form_id=form_id).exists()


def keeps_files_sql(form_id_column: str) -> str:
    """SQL true when the form whose id is in ``form_id_column`` keeps stored files."""
    return (f"EXISTS (SELECT 1 FROM {StoredFile._meta.db_table} kept "
            f"WHERE kept.form_id = {form_id_column})")


LINKS_COLUMN = "files"


def links_column(taken: Iterable[str]) -> str:
    """The name of the column that holds a row's file links (a CSV export, a sheet):
    ``files``, or, when a field is named that, the first of ``files_1``, ``files_2``... that no
    field is named. Field columns keep their field's name (contract), so this one gives way."""
    names = set(taken)
    name, suffix = LINKS_COLUMN, 0
    while name in names:
        suffix += 1
        name = f"{LINKS_COLUMN}_{suffix}"
    return name


def file_json(row: StoredFile) -> dict[str, Any]:
    return {
        "field": row.field,
        "name": row.name,
        "size": row.size,
        "contentType": row.content_type,
        "sha256": row.sha256,
        "url": links.url(row.pk),
    }


def files_by_submission(submission_ids) -> dict[str, list[dict[str, Any]]]:
    """Each submission's files (ids as text), in the order they were sent."""
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    rows = StoredFile.objects.filter(submission_id__in=list(submission_ids)).order_by(
        "submission_id", "position")
    for row in rows:
        found[str(row.submission_id)].append(file_json(row))
    return found


def files_of(submission_id) -> list[dict[str, Any]]:
    return files_by_submission([submission_id]).get(str(submission_id), [])


def with_files(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Submission bodies (any shape carrying ``id``) with their ``files`` added."""
    found = files_by_submission([body["id"] for body in bodies])
    for body in bodies:
        body["files"] = found.get(body["id"], [])
    return bodies


def add_files(bodies: list[dict[str, Any]], form: Form | None = None, *,
              form_id=None) -> list[dict[str, Any]]:
    """``bodies`` of one form, given ``files`` when the form's submissions carry them."""
    return with_files(bodies) if bodies and shown(form, form_id=form_id) else bodies


def texts_with_files(texts: list[str]) -> list[str]:
    """The same for bodies already written as JSON text (the database writes them on
    PostgreSQL): parsed, given their files, written again. Key order is kept."""
    bodies = with_files([json.loads(text) for text in texts])
    return [json.dumps(body, ensure_ascii=False) for body in bodies]


def usage_of(owner_id) -> tuple[int, int]:
    """(bytes used, quota) of an account."""
    usage = StorageUsage.objects.filter(owner_id=owner_id).first()
    if usage is None:
        return 0, settings.DEFAULT_STORAGE_QUOTA_BYTES
    return usage.used, usage.limit
