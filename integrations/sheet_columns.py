"""The columns of a Google Sheets integration: append-only, each given out under a row lock.

Two deliveries that bring new field names at the same moment must not both claim the same
next column. Names are therefore appended to ``config["columns"]`` under the integration's
row lock, so a column's position never changes once given. ``config["headerWritten"]`` counts
the header cells known to be on the sheet, so a header write that failed is made again by
the next delivery, whichever one that is.

The column of a row's file links is ours, not a field's: ``config["filesColumn"]`` holds its
position, and its header is ``files`` unless a field is named that (files/selectors.py,
``links_column``). A field that arrives later under the links column's name gets a column of
its own under that name, and the links column is renamed: a field's values are never written
into the links column, nor links into a field's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from files.selectors import links_column
from integrations.models import Integration

FIXED = ["submittedAt", "id"]


def _locked_config(integration_id) -> dict:
    return Integration.objects.select_for_update().only("config").get(pk=integration_id).config


def _save_config(integration_id, config: dict) -> None:
    Integration.objects.filter(pk=integration_id).update(config=config)


@dataclass(frozen=True)
class Columns:
    names: list[str]  # the header, in order
    written: int  # header cells known to be on the sheet
    links: int | None  # the position of the file links' column, once there is one


@transaction.atomic
def reserve(integration_id, names: Iterable[str], *, links: bool = False) -> Columns:
    """The sheet's columns with any new field ``names`` appended (and the links column, when
    ``links`` and there is none yet)."""
    config = _locked_config(integration_id)
    columns = list(config.get("columns") or FIXED)
    position = config.get("filesColumn")
    fields = {name for at, name in enumerate(columns) if at >= len(FIXED) and at != position}
    added = [name for name in dict.fromkeys(names) if name not in fields]
    columns += added
    if position is not None and columns[position] in added:
        columns[position] = links_column(columns[:position] + columns[position + 1:])
    if links and position is None:
        position = len(columns)
        columns.append(links_column(columns[len(FIXED):]))
    if columns != config.get("columns") or position != config.get("filesColumn"):
        _save_config(integration_id, {**config, "columns": columns, "filesColumn": position})
    return Columns(columns, config.get("headerWritten", 0), position)


@transaction.atomic
def header_confirm(integration_id, count: int) -> None:
    """Record that the first ``count`` header cells are on the sheet."""
    config = _locked_config(integration_id)
    if count > config.get("headerWritten", 0):
        _save_config(integration_id, {**config, "headerWritten": count})
