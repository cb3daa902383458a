"""Streams every submission of a form as CSV, JSON or NDJSON, in one pass, with flat memory.

Rows come from one snapshot, read as the client reads, ``BATCH`` at a time, through the
implementation chosen for this database (backends.py): PostgreSQL shapes them itself (pg.py),
any other database through the ORM and Python (portable.py). The CSV header is the form's
list of field names, kept as submissions arrive, so the rows are read once.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Iterator

from django.http import StreamingHttpResponse

from files import selectors as files
from forms_app.models import Form
from submissions import feed
from submissions.export import backends
from submissions.export.portable import safe_cell
from submissions.search import Search

BYTE_ORDER_MARK = "\ufeff".encode()


def _primed(stream: Iterator[list]) -> Iterator[list]:
    """``stream`` with its query already run, so what an export sends first (a header, a
    bracket) is sent after the snapshot is taken, and rows arriving later stay out."""
    first = next(stream, [])
    return _chain(first, stream)


def _chain(first: list, rest: Iterator[list]) -> Iterator[list]:
    yield first
    yield from rest


def csv_rows(form: Form, search: Search | None = None) -> Iterator[str | bytes]:
    """The inbox, or the part of it ``search`` matches, as CSV."""
    names, search = list(form.field_names), search or Search()
    links = files.shown(form)
    rows = backends.rows().csv(form, names, search, links=links)
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
    return backends.rows().json_texts(form_id, since, placed, only, search, with_files)


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
    row's time misses nothing (submissions/feed/)."""
    feed.catch_up()
    rows = _json_texts(form_id, since=since, placed=True, only=only, with_files=with_files)
    for batch in _primed(rows):
        if batch:
            yield "".join(line + "\n" for line in batch)


def attachment(form: Form, kind: str, search: Search | None = None,
               for_spreadsheets: bool = False) -> StreamingHttpResponse:
    """The inbox (or what ``search`` matches) as a CSV or JSON download, streamed.
    ``for_spreadsheets``: the CSV starts with a UTF-8 byte order mark, without which Excel
    reads it as the system's code page and garbles every accent (the dashboard's download;
    the API's export stays plain UTF-8 for programs)."""
    if kind == "csv":
        stream: Iterator[str | bytes] = csv_rows(form, search)
        if for_spreadsheets:
            stream = itertools.chain([BYTE_ORDER_MARK], stream)
        content_type = "text/csv; charset=utf-8"
    else:
        stream, content_type = json_rows(form, search), "application/json"
    response = StreamingHttpResponse(stream, content_type=content_type)
    name = f"{form.slug}-{'matching' if search else 'submissions'}.{kind}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
