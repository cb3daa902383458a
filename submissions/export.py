"""Streams every submission of a form as CSV or JSON with flat memory."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet
from django.db.models.functions import Now

from forms_app.models import Form
from submissions.models import Submission
from submissions.representation import field_text, submission_json

CHUNK = 1000
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _snapshot(form: Form) -> QuerySet[Submission]:
    # Both CSV passes must see the same rows, so rows arriving meanwhile are left out.
    return Submission.objects.filter(form=form, submitted_at__lte=Now()).order_by(
        "submitted_at", "id"
    )


def safe_cell(value: Any) -> str:
    """A cell as text that no spreadsheet will evaluate as a formula."""
    text = field_text(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_rows(form: Form) -> Iterator[str]:
    rows = _snapshot(form)
    names: dict[str, None] = {}
    for data in rows.values_list("data", flat=True).iterator(chunk_size=CHUNK):
        for name, _value in data:
            names.setdefault(name, None)
    writer = csv.writer(_Echo())
    yield writer.writerow(["id", "submittedAt", *(safe_cell(name) for name in names)])
    for submission in rows.iterator(chunk_size=CHUNK):
        body = submission_json(submission)
        fields = body["fields"]
        yield writer.writerow(
            [body["id"], body["submittedAt"], *(safe_cell(fields.get(name)) for name in names)]
        )


def json_rows(form: Form) -> Iterator[str]:
    yield "["
    separator = ""
    for submission in _snapshot(form).iterator(chunk_size=CHUNK):
        yield separator + json.dumps(submission_json(submission), ensure_ascii=False)
        separator = ","
    yield "]"
