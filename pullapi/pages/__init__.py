"""A page of the pull API: one implementation per database, chosen once (backends.py). On
PostgreSQL a page is one statement (pg.py); elsewhere the ORM reads it (orm.py)."""

from __future__ import annotations

from dataclasses import dataclass

from pullapi.cursors import Position


@dataclass(frozen=True)
class Page:
    rows: list[str]  # each row's JSON text, in the pull API's shape
    last: Position | None  # the last row's place, where the next page starts
    has_more: bool
