"""The exports' implementation for this database, chosen once: PostgreSQL shapes the rows
itself (pg.py), any other database has them shaped in Python (portable.py)."""

from __future__ import annotations

import functools

from django.db import connection

from submissions.export.pg import Postgres
from submissions.export.portable import Portable


@functools.cache
def rows() -> Portable:
    return Postgres() if connection.vendor == "postgresql" else Portable()
