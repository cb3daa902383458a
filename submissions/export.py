"""Streams every submission of a form as CSV, JSON or NDJSON, in one pass, with flat memory.

Rows come from one snapshot, read as the client reads. On PostgreSQL the database shapes them
itself: CSV through COPY ... TO STDOUT, JSON rows through a server-side cursor inside a
transaction (a cursor opened in autocommit is WITH HOLD, which makes PostgreSQL materialise the
whole result in temporary files before the first row). On SQLite one statement is stepped and
rows are shaped in Python, straight from the three columns an export shows: no model
instances. The CSV header is the form's list of field names, kept as submissions arrive, so
the rows are read once.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

from django.db import connection
from django.http import StreamingHttpResponse

from core.infra.dbtimeouts import paced_by_client
from core.timefmt import iso
from files import selectors as files
from forms_app.models import Form
from submissions import feed
from submissions.models import Submission
from submissions.representation import field_text, submission_json
from submissions.search import Search

BATCH = 2000
CHUNK = 64 * 1024
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_FIRST = frozenset(FORMULA_STARTS)


def safe_cell(value: Any) -> str:
    """A cell as text that no spreadsheet will evaluate as a formula."""
    text = field_text(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


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


def batches(rows) -> Iterator[list[tuple]]:
    """``rows`` ``BATCH`` at a time, from one snapshot."""
    # SQLite: a transaction here would begin as a write (IMMEDIATE) and hold every writer off.
    # Paced by the client: no statement or idle bound on its transaction (core/infra/dbtimeouts.py).
    snapshot = paced_by_client() if connection.vendor == "postgresql" else nullcontext()
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


# On PostgreSQL the database writes what it can as text, in C: the id, the time, and for JSON
# the whole row (json_object_agg keeps the stored pairs' order, where jsonb would sort the
# keys). The shape is the pull API's; only the whitespace differs.
STAMP = """to_char(s.submitted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"""
ROW_AS_JSON = f"""json_build_object(
  'id', s.id, 'formId', s.form_id, 'submittedAt', {STAMP},
  'fields', COALESCE((SELECT json_object_agg(pair.value->>0, pair.value->1
                                             ORDER BY pair.ordinality)
                      FROM jsonb_array_elements(s.data) WITH ORDINALITY AS pair
                      WHERE %s::text[] IS NULL OR pair.value->>0 = ANY(%s::text[])),
                     '{{}}'::json))::text"""


def _pg_rows(columns: str, params: list, form_id, since=None, placed: bool = False,
             search: Search | None = None) -> Iterator[list[tuple]]:
    """``columns`` of the form's inbox from ``since``, matching ``search``, oldest first (with
    ``placed``: the feed's rows in its order), ``BATCH`` at a time through a server-side
    cursor inside a transaction."""
    matching, matching_params = (search or Search()).condition("s")
    order = "s.position IS NOT NULL ORDER BY s.submitted_at, s.position" if placed else (
        "TRUE ORDER BY s.submitted_at, s.id")
    sql = (
        f"SELECT {columns} FROM {Submission._meta.db_table} s "
        "WHERE s.form_id = %s AND s.status = 'inbox' "
        "AND (%s::timestamptz IS NULL OR s.submitted_at >= %s::timestamptz) "
        f"AND {matching} AND {order}"
    )
    with paced_by_client(), connection.chunked_cursor() as cursor:
        cursor.execute(sql, [*params, form_id, since, since, *matching_params])
        while rows := cursor.fetchmany(BATCH):
            yield rows


def _python_csv(form: Form, names: list[str], search: Search,
                links: bool = False) -> Iterator[str]:
    """The rows (no header) shaped in Python: SQLite's way, and any form's whose rows end
    with their files' links (one a line in the last cell)."""
    out = io.StringIO()
    write = csv.writer(out, quoting=csv.QUOTE_ALL).writerow
    for batch in batches(inbox(form.pk, search=search)):
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


def _cell(value: Any) -> str:
    if value.__class__ is str:  # most values: no conversion to make
        return "'" + value if value[:1] in FORMULA_FIRST else value
    return safe_cell(value)


# On PostgreSQL, COPY writes the rows as CSV itself and the web process passes its bytes along.
# One pass over each row's pairs picks every column's value (field names are unique in a row:
# intake merges repeats). A cell is field_text() of the value, then safe_cell()'s prefix, in
# SQL: a string as itself, a list of strings joined, any other list or object as JSON (jsonb
# prints ", " and ": " as json.dumps does), a number or boolean as its text. Every cell is
# quoted (FORCE_QUOTE *, QUOTE_ALL in Python): a spreadsheet that splits on another character
# than the comma then still sees one text per cell, never a formula after a ";" (OWASP, CSV
# injection). COALESCE makes a missing value an empty text, quoted as Python quotes it.
CELL_TEXT = """CASE jsonb_typeof(pair->1)
  WHEN 'string' THEN pair->>1
  WHEN 'array' THEN CASE
    WHEN jsonb_path_exists(pair->1, 'strict $[*] ? (@.type() != "string")') THEN (pair->1)::text
    ELSE (SELECT string_agg(item, ', ' ORDER BY n)
          FROM jsonb_array_elements_text(pair->1) WITH ORDINALITY AS items(item, n)) END
  WHEN 'object' THEN (pair->1)::text
  ELSE pair->>1 END"""
CELL_SAFE = (
    "COALESCE(CASE WHEN left({t}, 1) IN ('=', '+', '-', '@', E'\\t', E'\\r') "
    "THEN '''' || {t} ELSE {t} END, '')"
)


def _pg_csv_sql(names: list[str], matching: str) -> str:
    count = range(len(names))
    texts = ", ".join(f"min({CELL_TEXT}) FILTER (WHERE pair->>0 = %s) AS t{i}" for i in count)
    cells = "".join(", " + CELL_SAFE.format(t=f"texts.t{i}") for i in count)
    return (
        f"COPY (SELECT s.id, {STAMP}{cells} FROM {Submission._meta.db_table} s "
        f"CROSS JOIN LATERAL (SELECT {texts or 'count(*)'} "
        "                    FROM jsonb_array_elements(s.data) AS pair) texts "
        f"WHERE s.form_id = %s AND s.status = 'inbox' AND {matching} "
        "ORDER BY s.submitted_at, s.id) TO STDOUT (FORMAT csv, FORCE_QUOTE *)"
    )


def _pg_csv(form: Form, names: list[str], search: Search) -> Iterator[bytes]:
    """The rows (no header) as COPY writes them, in blocks of about ``CHUNK`` bytes."""
    matching, matching_params = search.condition("s")
    params = [*names, form.pk, *matching_params]
    sql = _pg_csv_sql(names, matching)
    with paced_by_client(), connection.cursor() as cursor, cursor.copy(sql, params) as copy:
        block = bytearray()
        for row in copy:
            block += row
            if len(block) >= CHUNK:
                yield bytes(block)
                block.clear()
        yield bytes(block)


def csv_rows(form: Form, search: Search | None = None) -> Iterator[str | bytes]:
    """The inbox, or the part of it ``search`` matches, as CSV."""
    names, search = list(form.field_names), search or Search()
    rows: Iterator[str | bytes]
    links = files.shown(form)
    if links:  # the links are signed here, so these rows are shaped in Python
        rows = _python_csv(form, names, search, links=True)
    elif connection.vendor == "postgresql":
        rows = _pg_csv(form, names, search)
    else:
        rows = _python_csv(form, names, search)
    first = next(rows, "")  # the statement runs before the header goes out, as in _primed()
    out = io.StringIO()
    # Lines end as the rows' do: "\n" from COPY, "\r\n" from Python's csv module (which
    # quotes a carriage return only when it is part of its line terminator).
    terminator = "\n" if isinstance(first, bytes) else "\r\n"
    header_cells = ["id", "submittedAt", *(safe_cell(name) for name in names)]
    csv.writer(out, lineterminator=terminator, quoting=csv.QUOTE_ALL).writerow(
        [*header_cells, *([safe_cell(files.links_column(names))] if links else [])])
    header = out.getvalue()
    yield header.encode() + first if isinstance(first, bytes) else header + first
    yield from rows


def _json_texts(form_id, since=None, placed: bool = False, only: set[str] | None = None,
                search: Search | None = None,
                with_files: bool | None = None) -> Iterator[list[str]]:
    """Each row in the pull API's shape as JSON text, ``BATCH`` at a time, from one
    snapshot; ``only``: just these fields; ``placed``: the feed's rows, in its order;
    ``with_files``: with their files (None: as the form's submissions carry them)."""
    if with_files is None:
        with_files = files.shown(form_id=form_id)
    if connection.vendor != "postgresql":
        for batch in batches(inbox(form_id, since, placed, search)):
            bodies = [_pull_shape(form_id, row, only) for row in batch]
            if with_files:
                files.with_files(bodies)
            yield [json.dumps(body, ensure_ascii=False) for body in bodies]
        return
    names = sorted(only) if only is not None else None
    for rows in _pg_rows(ROW_AS_JSON, [names, names], form_id, since, placed, search):
        texts = [text for (text,) in rows]
        yield files.texts_with_files(texts) if with_files and texts else texts


def _pull_shape(form_id, row: tuple, only: set[str] | None) -> dict[str, Any]:
    ident, moment, data = row
    return submission_json(
        Submission(pk=ident, form_id=form_id, submitted_at=moment, data=data), only=only)


def json_rows(form: Form, search: Search | None = None) -> Iterator[str]:
    """The inbox, or the part of it ``search`` matches, as one JSON array."""
    opened = False
    for batch in _primed(_json_texts(form.pk, search=search)):
        if not batch:
            continue
        yield ("[" if not opened else ",") + ",".join(batch)
        opened = True
    yield "]" if opened else "[]"


def ndjson_rows(form_id, since=None, only: set[str] | None = None,
                with_files: bool | None = None) -> Iterator[str]:
    """The bulk sync: every row placed in the feed, in its order (as the pull API's pages),
    after placing those committed so far; a client that goes on with ``since`` set to the last
    row's time misses nothing (submissions/feed.py)."""
    feed.catch_up()
    rows = _json_texts(form_id, since=since, placed=True, only=only, with_files=with_files)
    for batch in _primed(rows):
        if batch:
            yield "".join(line + "\n" for line in batch)


def attachment(form: Form, kind: str, search: Search | None = None) -> StreamingHttpResponse:
    """The inbox (or what ``search`` matches) as a CSV or JSON download, streamed."""
    if kind == "csv":
        stream, content_type = csv_rows(form, search), "text/csv; charset=utf-8"
    else:
        stream, content_type = json_rows(form, search), "application/json"
    response = StreamingHttpResponse(stream, content_type=content_type)
    name = f"{form.slug}-{'matching' if search else 'submissions'}.{kind}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
