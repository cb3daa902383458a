"""GOOGLE_SHEETS: each submission a row in a spreadsheet the owner connected through Google."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from integrations import sheet_columns
from integrations.clients import google
from integrations.kinds.base import Kind, Outcome
from submissions.representation import field_text

FILES_COLUMN = "files"


def _cells(event: dict[str, Any]) -> dict[str, Any]:
    """The row's cells by column name: the fields, and, when the submission has files, their
    links (one a line) in a ``files`` column."""
    data = event["data"]
    cells = dict(data["fields"])
    if data.get("files"):
        cells[FILES_COLUMN] = "\n".join(item["url"] for item in data["files"])
    return cells


def sheet_row(columns: list[str], event: dict[str, Any]) -> list[str]:
    data = event["data"]
    cells = _cells(event)
    return [
        data["submittedAt"],
        data["id"],
        *(field_text(cells.get(name)) for name in columns[2:]),
    ]


def transport(integration, event: dict[str, Any], msg_id: str) -> Outcome:
    tokens = google.Tokens.from_dict(integration.secrets)
    creds = google.credentials(tokens)
    spreadsheet_id = integration.config["spreadsheetId"]
    columns, written = sheet_columns.reserve(integration.pk, _cells(event))
    sheets = google.Sheets(creds)  # one deadline for the whole attempt
    try:
        sheets.refresh_if_expired()
        if written < len(columns):
            # Names sit at fixed positions, so writing this delivery's list from A1 leaves
            # any longer header another delivery wrote meanwhile intact.
            sheets.write_header(spreadsheet_id=spreadsheet_id, header=columns)
            sheet_columns.header_confirm(integration.pk, len(columns))
        sheets.append_row(spreadsheet_id=spreadsheet_id, row=sheet_row(columns, event))
    except google.GoogleError as error:
        return Outcome(False, error.status_code, str(error), permanent=error.permanent,
                       disable=error.revoked)
    refreshed = google.Tokens.from_credentials(creds)
    secrets = refreshed.as_dict() if refreshed.token != tokens.token else None
    return Outcome(True, 200, secrets=secrets)


KIND = Kind(
    type="GOOGLE_SHEETS",
    label="Google Sheets",
    transport=transport,
    folder=Path(__file__).parent,
    schema_out={
        "type": "object",
        "title": "GoogleSheetsConfig",
        "properties": {
            "spreadsheetId": {"type": "string"},
            "spreadsheetUrl": {"type": "string"},
            "columns": {"type": "array", "items": {"type": "string"}},
            "headerWritten": {"type": "integer"},
        },
        "required": ["spreadsheetId", "columns"],
    },
)
