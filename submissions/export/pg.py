"""The exports' rows on PostgreSQL, which shapes them itself, in C: CSV through COPY ... TO
STDOUT, JSON rows through a server-side cursor inside a transaction (a cursor opened in
autocommit is WITH HOLD, which makes PostgreSQL materialise the whole result in temporary
files before the first row). Rows whose CSV carries files' links are shaped in Python, as
everywhere (portable.py), inside the same kind of snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from itertools import islice
from typing import Any

from django.db import connection

from core.infra.dbtimeouts import paced_by_client
from files import selectors as files
from forms_app.models import Form
from submissions.export.portable import BATCH, Portable
from submissions.models import Submission
from submissions.search import Search

CHUNK = 64 * 1024

# The database writes what it can as text: the id, the time, and for JSON the whole row
# (json_object_agg keeps the stored pairs' order, where jsonb would sort the keys). The shape
# is the pull API's (submissions/representation.py); only the whitespace differs.
# tests/submissions/test_json_shape.py holds the two equal.
STAMP = """to_char(s.submitted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"""
ROW_AS_JSON = f"""json_build_object(
  'id', s.id, 'formId', s.form_id, 'submittedAt', {STAMP},
  'fields', COALESCE((SELECT json_object_agg(pair.value->>0, pair.value->1
                                             ORDER BY pair.ordinality)
                      FROM jsonb_array_elements(s.data) WITH ORDINALITY AS pair
                      WHERE %s::text[] IS NULL OR pair.value->>0 = ANY(%s::text[])),
                     '{{}}'::json))::text"""

# COPY writes the rows as CSV itself and the web process passes its bytes along. One pass over
# each row's pairs picks every column's value (field names are unique in a row: intake merges
# repeats). A cell is field_text() of the value, then safe_cell()'s prefix, in SQL: a string
# as itself, a list of strings joined, any other list or object as JSON (jsonb prints ", " and
# ": " as json.dumps does), a number or boolean as its text. Every cell is quoted (FORCE_QUOTE
# *, QUOTE_ALL in Python): a spreadsheet that splits on another character than the comma then
# still sees one text per cell, never a formula after a ";" (OWASP, CSV injection). COALESCE
# makes a missing value an empty text, quoted as Python quotes it.
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


def _rows(columns: str, params: list, form_id, since=None, placed: bool = False,
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


def _csv_sql(names: list[str], matching: str) -> str:
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


def _copied_csv(form: Form, names: list[str], search: Search) -> Iterator[bytes]:
    """The rows (no header) as COPY writes them, in blocks of about ``CHUNK`` bytes."""
    matching, matching_params = search.condition("s")
    params = [*names, form.pk, *matching_params]
    sql = _csv_sql(names, matching)
    with paced_by_client(), connection.cursor() as cursor, cursor.copy(sql, params) as copy:
        block = bytearray()
        for row in copy:
            block += row
            if len(block) >= CHUNK:
                yield bytes(block)
                block.clear()
        yield bytes(block)


class Postgres(Portable):
    def snapshot(self) -> AbstractContextManager[Any]:
        # Paced by the client: no statement or idle bound on its transaction
        # (core/infra/dbtimeouts.py).
        return paced_by_client()

    def batches(self, rows) -> Iterator[list[tuple]]:
        """``rows`` ``BATCH`` at a time through a server-side cursor inside the snapshot's
        transaction, even with DATABASE_SERVER_SIDE_CURSORS off (which .iterator() follows):
        the cursor ends with the transaction, which a pooler carries."""
        with self.snapshot():
            found = rows.query.get_compiler(rows.db).results_iter(
                tuple_expected=True, chunked_fetch=True, chunk_size=BATCH)
            while batch := list(islice(found, BATCH)):
                yield batch

    def csv(self, form: Form, names: list[str], search: Search,
            links: bool = False) -> Iterator[str | bytes]:
        if links:  # the links are signed in Python
            return super().csv(form, names, search, links=True)
        return _copied_csv(form, names, search)

    def json_texts(self, form_id, since=None, placed: bool = False,
                   only: set[str] | None = None, search: Search | None = None,
                   with_files: bool = False) -> Iterator[list[str]]:
        names = sorted(only) if only is not None else None
        for rows in _rows(ROW_AS_JSON, [names, names], form_id, since, placed, search):
            texts = [text for (text,) in rows]
            yield files.texts_with_files(texts) if with_files and texts else texts
