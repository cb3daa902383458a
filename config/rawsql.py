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


def in_model_order(model, names: set[str]) -> tuple[str, ...]:
    """Model.from_db takes values in the order of the model's fields."""
    return tuple(f.attname for f in model._meta.concrete_fields if f.attname in names)


def placeholders(count: int) -> str:
    return ", ".join(["%s"] * count)


def db_id(model: type[Model], value: Any) -> Any:
    """A primary key as the database takes it (a UUID is text on SQLite)."""
    return model._meta.pk.get_db_prep_value(value, connection)


def fetch(sql: str, params: list, fields: tuple[Field, ...]) -> list[list[Any]]:
    """Rows of a SELECT whose columns are ``fields``, each value converted as the ORM would."""
    converters = _converters(fields)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    converted = []
    for row in rows:
        values = list(row)
        for index, functions, column in converters:
            for function in functions:
                values[index] = function(values[index], column, connection)
        converted.append(values)
    return converted


def _converters(fields: tuple[Field, ...]) -> list:
    """The columns' converters, worked out once per connection (the backend's converters are
    its methods) and list of fields; columns that need none are left out."""
    cache = connection.__dict__.setdefault("_formflow_converters", {})
    if fields not in cache:
        found = []
        for index, field in enumerate(fields):
            column = field.get_col(field.model._meta.db_table)
            functions = connection.ops.get_db_converters(column)
            functions += column.get_db_converters(connection)
            if functions:
                found.append((index, functions, column))
        cache[fields] = found
    return cache[fields]


def execute(sql: str, params: list) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount
