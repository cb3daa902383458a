"""Hand-written SQL for the few statements a delivery worker runs per batch.

The ORM compiles a query anew on every call; for a worker recording ten deliveries that cost
more than the deliveries. These helpers keep the ORM's conversions (the same Python values
on PostgreSQL and SQLite) without its compiler.
"""

from __future__ import annotations

import functools
from typing import Any, Generic, TypeVar, cast

from django.db import connection
from django.db.models import Field, Model
from django.db.models.base import ModelState


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


def _field(model: type[Model], name: str) -> Field:
    """A concrete column of ``model`` (get_field also finds reverse relations)."""
    return cast(Field, model._meta.get_field(name))


M = TypeVar("M", bound=Model)


class OwnedRow(Generic[M]):
    """One row of ``model`` with its active owner's, read by one prebuilt statement into two
    instances: what the lookups on every request need, without the ORM's compiler.
    ``where`` names the row's columns through the alias ``t``; ``owner`` names the foreign
    key to the user it is read with, and ``owner_column`` the SQL of that user's id, when it
    is more than the key's column."""

    def __init__(self, model: type[M], fields: set[str], owner_fields: set[str],
                 where: str, owner: str = "owner", owner_column: str = "") -> None:
        self.model = model
        self.owner = owner
        self.owner_column = owner_column or f"t.{_field(model, owner).column}"
        self.owner_model = cast(type[Model], model._meta.get_field(owner).related_model)
        self.fields = in_model_order(model, fields)
        self.owner_fields = in_model_order(self.owner_model, owner_fields)
        self.columns = tuple(_field(model, name) for name in self.fields) + tuple(
            _field(self.owner_model, name) for name in self.owner_fields
        )
        self.where = where

    @functools.cached_property
    def sql(self) -> str:
        row, owner = self.model._meta, self.owner_model._meta
        columns = [f"t.{_field(self.model, name).column}" for name in self.fields]
        columns += [f"u.{_field(self.owner_model, name).column}" for name in self.owner_fields]
        return (
            f"SELECT {', '.join(columns)} FROM {row.db_table} t "
            f"JOIN {owner.db_table} u ON u.id = {self.owner_column} "
            f"WHERE {self.where} AND u.is_active = %s"
        )

    def get(self, *params: Any) -> M | None:
        row = self.row(*params)
        return None if row is None else self.build(row)

    def row(self, *params: Any) -> list[Any] | None:
        """The values ``build`` takes, or None."""
        rows = fetch(self.sql, [*params, True], self.columns)
        return rows[0] if rows else None

    def build(self, row: list[Any]) -> M:
        """New instances from a row's values (which they share: JSON values are not copied)."""
        split = len(self.fields)
        found: Any = self.model.from_db(connection.alias, self.fields, row[:split])
        setattr(found, self.owner,
                self.owner_model.from_db(connection.alias, self.owner_fields, row[split:]))
        return found

    def copy(self, built: M) -> M:
        """New instances equal to ``built`` (from ``build``), sharing its values as ``build``
        shares the row's: a fifth of the cost of building them again, which runs every
        field through ``Model.__init__``."""
        found = _copied(built)
        found._state.fields_cache[self.owner] = _copied(
            getattr(built, self.owner))
        return found


def _copied(instance: M) -> M:
    state = ModelState()
    state.adding, state.db = False, instance._state.db
    found = instance.__class__.__new__(instance.__class__)
    found.__dict__ = {**instance.__dict__, "_state": state}
    return found
