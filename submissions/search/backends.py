"""How a search's text is matched on this database, chosen once. Both answer from an index
(submissions/search/__init__.py says why):

- PostgreSQL: ``ILIKE`` over the text of the values, through a trigram GIN index (pg_trgm)
  on the same expression;
- SQLite: an FTS5 table with the trigram tokenizer, kept by triggers (migration 0006),
  matched as a phrase.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.db import connection

# The values' text, as the PostgreSQL index holds it: the same expression, or no index.
PG_VALUES_TEXT = "(jsonb_path_query_array({alias}.data, '$[*][1]'))::text"
FTS_TABLE = "submissions_search"
FTS_IDS = "submissions_search_ids"

TextMatch = Callable[[str, str], tuple[str, str]]  # (alias, text) -> (SQL, its parameter)


def postgres_match(alias: str, text: str) -> tuple[str, str]:
    return f"{PG_VALUES_TEXT.format(alias=alias)} ILIKE %s", f"%{_escaped(text)}%"


def sqlite_match(alias: str, text: str) -> tuple[str, str]:
    # The trigram tokenizer matches the text as a phrase of its trigrams, from its index.
    return (
        f"{alias}.id IN (SELECT ids.submission_id FROM {FTS_TABLE} "
        f"JOIN {FTS_IDS} ids ON ids.id = {FTS_TABLE}.rowid WHERE {FTS_TABLE} MATCH %s)"
    ), '"' + text.replace('"', '""') + '"'


def _escaped(text: str) -> str:
    """``text`` for a LIKE pattern, its wildcards taken literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@functools.cache
def text_match() -> TextMatch:
    return postgres_match if connection.vendor == "postgresql" else sqlite_match
