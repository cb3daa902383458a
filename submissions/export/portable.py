"""The exports' rows read through the ORM and shaped in Python, straight from the three
columns an export shows: no model instances. SQLite's way, and on any database the CSV of a
form whose rows end with their files' links (signed here)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from core.timefmt import iso
from files import selectors as files
from forms_app.models import Form
from submissions.models import Submission
from submissions.representation import field_text, submission_json
from submissions.search import Search

BATCH = 2000
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_FIRST = frozenset(FORMULA_STARTS)


def safe_cell(value: Any) -> str:
    """A cell as text that no spreadsheet will evaluate as a formula."""
    text = field_text(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def _cell(value: Any) -> str:
    if value.__class__ is str:  # most values: no conversion to make
        return "'" + value if value[:1] in FORMULA_FIRST else value
    return safe_cell(value)


def inbox(form_id, since=None, placed: bool = False, search: Search | None = None):
    """(id, submitted_at, data) of the form's inbox, oldest first: from ``since`` (inclusive),
    matching ``search``; with ``placed``, only the rows placed in the feed, in its order."""
    rows = Submission.inbox.filter(form_id=form_id)
    if search:
        rows = search.applied(rows)
    if since is not None:
        rows = rows.filter(submitted_at__gte=since)
    if placed:
        rows = rows.filter(position__isnull=False).order_by("submitted_at", "position")
    else:
        rows = rows.order_by("submitted_at", "id")
    return rows.values_list("id", "submitted_at", "data")


def _pull_shape(form_id, row: tuple, only: set[str] | None) -> dict[str, Any]:
    ident, moment, data = row
    return submission_json(
        Submission(pk=ident, form_id=form_id, submitted_at=moment, data=data), only=only)


class Portable:
    """Every export's rows, ``BATCH`` at a time, from one snapshot."""

    def snapshot(self) -> AbstractContextManager[Any]:
        # SQLite: a transaction here would begin as a write (IMMEDIATE) and hold every writer off.
        return nullcontext()

    def batches(self, rows) -> Iterator[list[tuple]]:
        """``rows`` ``BATCH`` at a time, from one snapshot."""
        with self.snapshot():
            batch: list[tuple] = []
            for row in rows.iterator(chunk_size=BATCH):
                batch.append(row)
                if len(batch) == BATCH:
                    yield batch
                    batch = []
            yield batch

    def csv(self, form: Form, names: list[str], search: Search,
            links: bool = False) -> Iterator[str | bytes]:
        """The rows (no header); with ``links``, each ends with its files' links (one a line
        in the last cell)."""
        out = io.StringIO()
        write = csv.writer(out, quoting=csv.QUOTE_ALL).writerow
        for batch in self.batches(inbox(form.pk, search=search)):
            found = files.files_by_submission([row[0] for row in batch]) if links else {}
            for ident, moment, data in batch:
                fields = dict(data)
                cells = [ident, iso(moment), *[_cell(fields.get(name)) for name in names]]
                if links:
                    cells.append("\n".join(item["url"] for item in found.get(str(ident), [])))
                write(cells)
            yield out.getvalue()
            out.seek(0)
            out.truncate()

    def json_texts(self, form_id, since=None, placed: bool = False,
                   only: set[str] | None = None, search: Search | None = None,
                   with_files: bool = False) -> Iterator[list[str]]:
        """Each row in the pull API's shape as JSON text; ``only``: just these fields;
        ``placed``: the feed's rows, in its order; ``with_files``: with their files."""
        for batch in self.batches(inbox(form_id, since, placed, search)):
            bodies = [_pull_shape(form_id, row, only) for row in batch]
            if with_files:
                files.with_files(bodies)
            yield [json.dumps(body, ensure_ascii=False) for body in bodies]
