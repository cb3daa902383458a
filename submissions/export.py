"""Streams every submission of a form as CSV, JSON or NDJSON, in one pass, with flat memory.

Rows come from one snapshot, read in batches: on PostgreSQL through a server-side cursor
inside a transaction (a cursor opened in autocommit is WITH HOLD, which makes PostgreSQL
materialise the whole result in temporary files before the first row), on SQLite through one
statement stepped as the client reads. Only the three columns an export shows are read, and
rows are shaped straight from them: no model instances. The CSV header is the form's list of
field names, kept as submissions arrive, so the rows are read once.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from contextlib import nullcontext
from datetime import UTC
from typing import Any

from django.db import connection, transaction

from forms_app.models import Form
from submissions import horizon
from submissions.models import Submission
from submissions.representation import field_text

BATCH = 2000
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_FIRST = frozenset(FORMULA_STARTS)


def safe_cell(value: Any) -> str:
    """A cell as text that no spreadsheet will evaluate as a formula."""
    text = field_text(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def _stamp(moment) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def inbox(form: Form, since=None, before=None):
    """(id, submitted_at, data) of the form's inbox, oldest first: from ``since`` (inclusive)
    and below ``before`` (a commit horizon), when given."""
    rows = Submission.inbox.filter(form=form)
    if since is not None:
        rows = rows.filter(submitted_at__gte=since)
    rows = horizon.settled(rows, before)
    return rows.order_by("submitted_at", "id").values_list("id", "submitted_at", "data")


def batches(rows) -> Iterator[list[tuple]]:
    """``rows`` ``BATCH`` at a time, from one snapshot."""
    # SQLite: a transaction here would begin as a write (IMMEDIATE) and hold every writer off.
    snapshot = transaction.atomic() if connection.vendor == "postgresql" else nullcontext()
    with snapshot:
        batch: list[tuple] = []
        for row in rows.iterator(chunk_size=BATCH):
            batch.append(row)
            if len(batch) == BATCH:
                yield batch
                batch = []
        yield batch


def _primed(stream: Iterator[list]) -> Iterator[list]:
    """``stream`` with its query already run, so what an export sends first (a header, a
    bracket) is sent after the snapshot is taken, and rows arriving later stay out."""
    first = next(stream, [])
    return _chain(first, stream)


def _chain(first: list, rest: Iterator[list]) -> Iterator[list]:
    yield first
    yield from rest


ROW_FOR_CSV = """
SELECT s.id::text,
       to_char(s.submitted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), s.data
FROM submissions_submission s
WHERE s.form_id = %s AND s.status = 'inbox'
ORDER BY s.submitted_at, s.id
"""


def _csv_sources(form: Form) -> Iterator[list[tuple]]:
    """(id text, time text, pairs) ``BATCH`` at a time; on PostgreSQL the id and the time
    come as text already."""
    if connection.vendor != "postgresql":
        for batch in batches(inbox(form)):
            yield [(str(ident), _stamp(moment), data) for ident, moment, data in batch]
        return
    with transaction.atomic(), connection.chunked_cursor() as cursor:
        cursor.execute(ROW_FOR_CSV, [form.pk])
        while rows := cursor.fetchmany(BATCH):
            # Django has psycopg hand jsonb over as text, and decodes it itself.
            yield [(ident, stamp, json.loads(data)) for ident, stamp, data in rows]


def _cell(value: Any) -> str:
    if value.__class__ is str:  # most values: no conversion to make
        return "'" + value if value[:1] in FORMULA_FIRST else value
    return safe_cell(value)


def csv_rows(form: Form) -> Iterator[str]:
    sources = _primed(_csv_sources(form))
    names = list(form.field_names)
    out = io.StringIO()
    write = csv.writer(out).writerow
    write(["id", "submittedAt", *(safe_cell(name) for name in names)])
    for batch in sources:
        for ident, stamp, data in batch:
            fields = dict(data)
            write([ident, stamp, *[_cell(fields.get(name)) for name in names]])
        yield out.getvalue()
        out.seek(0)
        out.truncate()


def _objects(form: Form, batch: list[tuple], only: set[str] | None = None) -> Iterator[str]:
    """Each row in the pull API's shape, as JSON text; ``only``: just these fields."""
    form_id = json.dumps(str(form.pk))
    for ident, moment, data in batch:
        shown = {name: value for name, value in data if only is None or name in only}
        fields = json.dumps(shown, ensure_ascii=False)
        yield (f'{{"id": "{ident}", "formId": {form_id}, "submittedAt": "{_stamp(moment)}", '
               f'"fields": {fields}}}')


# On PostgreSQL each row's JSON is written by the database, in C, from the stored pairs in
# their order (json_object_agg keeps order; jsonb would sort the keys): the web process only
# passes text along. The shape is the pull API's; only the whitespace differs.
ROW_AS_JSON = """
SELECT json_build_object(
  'id', s.id, 'formId', s.form_id,
  'submittedAt', to_char(s.submitted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'fields', COALESCE((SELECT json_object_agg(pair.value->>0, pair.value->1
                                             ORDER BY pair.ordinality)
                      FROM jsonb_array_elements(s.data) WITH ORDINALITY AS pair
                      WHERE %s::text[] IS NULL OR pair.value->>0 = ANY(%s::text[])),
                     '{}'::json))::text
FROM submissions_submission s
WHERE s.form_id = %s AND s.status = 'inbox'
  AND (%s::timestamptz IS NULL OR s.submitted_at >= %s::timestamptz)
  AND (%s::timestamptz IS NULL OR s.submitted_at < %s::timestamptz)
ORDER BY s.submitted_at, s.id
"""


def _json_texts(form: Form, since=None, before=None, only: set[str] | None = None
                ) -> Iterator[list[str]]:
    """Each row as its JSON text, ``BATCH`` at a time, from one snapshot."""
    if connection.vendor != "postgresql":
        for batch in batches(inbox(form, since, before)):
            yield list(_objects(form, batch, only))
        return
    names = sorted(only) if only is not None else None
    params = [names, names, form.pk, since, since, before, before]
    with transaction.atomic(), connection.chunked_cursor() as cursor:
        cursor.execute(ROW_AS_JSON, params)
        while rows := cursor.fetchmany(BATCH):
            yield [text for (text,) in rows]


def json_rows(form: Form) -> Iterator[str]:
    opened = False
    for batch in _primed(_json_texts(form)):
        if not batch:
            continue
        yield ("[" if not opened else ",") + ",".join(batch)
        opened = True
    yield "]" if opened else "[]"


def ndjson_rows(form: Form, since=None, only: set[str] | None = None) -> Iterator[str]:
    """The bulk sync: every settled row (below the commit horizon, as the pull API's pages),
    so a client that goes on with ``since`` set to the last row's time misses nothing."""
    before = horizon.committed_before()
    for batch in _primed(_json_texts(form, since=since, before=before, only=only)):
        if batch:
            yield "".join(line + "\n" for line in batch)
