"""Hand-written SQL for the few statements a delivery worker runs per batch.

The ORM compiles a query anew on every call; for a worker recording ten deliveries that cost
more than the deliveries. These helpers keep the ORM's conversions (the same Python values
on PostgreSQL and SQLite) without its compiler.
"""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.models import Field, Model


def table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def placeholders(count: int) -> str:
    return ", ".join(["%s"] * count)


def db_value(field: Field, value: Any) -> Any:
    """``value`` as the database takes it for ``field`` (UUIDs as text on SQLite, ...)."""
    return field.get_db_prep_value(value, connection, prepared=False)


def fetch(sql: str, params: list, fields: list[Field]) -> list[list[Any]]:
    """Rows of a SELECT whose columns are ``fields``, each value converted as the ORM would."""
    columns = [field.get_col(field.model._meta.db_table) for field in fields]
    converters = [
        (connection.ops.get_db_converters(column) + column.get_db_converters(connection), column)
        for column in columns
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    converted = []
    for row in rows:
        values = list(row)
        for index, (functions, column) in enumerate(converters):
            for function in functions:
                values[index] = function(values[index], column, connection)
        converted.append(values)
    return converted


def execute(sql: str, params: list) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount
