"""How a page of the pull API is read on this database, chosen once."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime

from django.db import connection

from pullapi.cursors import Position
from pullapi.pages import Page, orm, pg

Reader = Callable[[object, str, int, datetime | None, Position | None, set[str] | None], Page]


@functools.cache
def reader() -> Reader:
    return pg.page if connection.vendor == "postgresql" else orm.page
