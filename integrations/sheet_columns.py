"""The columns of a Google Sheets integration: append-only, each given out under a row lock.

Two deliveries that bring new field names at the same moment must not both claim the same
next column. Names are therefore appended to ``config["columns"]`` under the integration's
row lock, so a column's position never changes once given. ``config["headerWritten"]`` counts
the header cells known to be on the sheet, so a header write that failed is made again by
the next delivery, whichever one that is.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from integrations.models import Integration

FIXED = ["submittedAt", "id"]


def _locked_config(integration_id) -> dict:
    return Integration.objects.select_for_update().only("config").get(pk=integration_id).config


def _save_config(integration_id, config: dict) -> None:
    Integration.objects.filter(pk=integration_id).update(config=config)


@transaction.atomic
def reserve(integration_id, names: Iterable[str]) -> tuple[list[str], int]:
    """The sheet's columns with any new ``names`` appended, and the header cells written."""
    config = _locked_config(integration_id)
    columns = list(config.get("columns") or FIXED)
    added = [name for name in names if name not in columns]
    if added:
        columns += added
        _save_config(integration_id, {**config, "columns": columns})
    return columns, config.get("headerWritten", 0)


@transaction.atomic
def header_confirm(integration_id, count: int) -> None:
    """Record that the first ``count`` header cells are on the sheet."""
    config = _locked_config(integration_id)
    if count > config.get("headerWritten", 0):
        _save_config(integration_id, {**config, "headerWritten": count})
