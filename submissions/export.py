"""Streams every submission of a form as CSV or JSON with flat memory."""

from __future__ import annotations

import csv
import json
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from forms_app.models import Form
from submissions import horizon, keyset
from submissions.models import Submission
from submissions.representation import field_text, submission_json

CHUNK = 1000
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _in_order(form: Form) -> QuerySet[Submission]:
    return Submission.inbox.filter(form=form).order_by("submitted_at", "id")


def _up_to(rows: QuerySet[Submission], last: tuple[datetime, uuid.UUID]) -> QuerySet[Submission]:
    """Rows at or before ``last`` in (submitted_at, id) order.

    The second CSV pass must not meet a row the first pass missed (its field names would be
    missing from the header). Both passes read below one commit horizon, taken before the
    first: no row can commit below it later, and rows that committed meanwhile above the last
    row seen are left out by this bound.
    """
    return rows.exclude(keyset.past(*last, "asc"))


def safe_cell(value: Any) -> str:
    """A cell as text that no spreadsheet will evaluate as a formula."""
    text = field_text(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_rows(form: Form) -> Iterator[str]:
    rows = horizon.settled(_in_order(form), horizon.committed_before())
    names: dict[str, None] = {}
    last = None
    for moment, ident, data in rows.values_list("submitted_at", "id", "data").iterator(
        chunk_size=CHUNK
    ):
        last = (moment, ident)
        for name, _value in data:
            names.setdefault(name, None)
    writer = csv.writer(_Echo())
    yield writer.writerow(["id", "submittedAt", *(safe_cell(name) for name in names)])
    if last is None:
        return
    for submission in _up_to(rows, last).iterator(chunk_size=CHUNK):
        body = submission_json(submission)
        fields = body["fields"]
        yield writer.writerow(
            [body["id"], body["submittedAt"], *(safe_cell(fields.get(name)) for name in names)]
        )


def json_rows(form: Form) -> Iterator[str]:
    yield "["
    separator = ""
    for submission in _in_order(form).iterator(chunk_size=CHUNK):
        yield separator + json.dumps(submission_json(submission), ensure_ascii=False)
        separator = ","
    yield "]"
