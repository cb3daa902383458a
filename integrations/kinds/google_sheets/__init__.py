"""GOOGLE_SHEETS: each submission a row in a spreadsheet the owner connected through Google."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from integrations import sheet_columns
from integrations.clients import google
from integrations.kinds.base import Kind, Outcome
from submissions.representation import field_text


def sheet_row(columns: sheet_columns.Columns, event: dict[str, Any]) -> list[str]:
    """``submittedAt``, ``id``, then each column's cell: a field's value under its name, and
    the submission's file links (one a line) in the links column, found by its position."""
    data = event["data"]
    fields = data["fields"]
    links = "\n".join(item["url"] for item in data.get("files") or [])
    return [
        data["submittedAt"],
        data["id"],
        *(links if at == columns.links else field_text(fields.get(name))
          for at, name in enumerate(columns.names) if at >= len(sheet_columns.FIXED)),
    ]


def transport(integration, event: dict[str, Any], msg_id: str) -> Outcome:
    tokens = google.Tokens.from_dict(integration.secrets)
    creds = google.credentials(tokens)
    spreadsheet_id = integration.config["spreadsheetId"]
    columns = sheet_columns.reserve(integration.pk, event["data"]["fields"],
                                    links=bool(event["data"].get("files")))
    sheets = google.Sheets(creds)  # one deadline for the whole attempt
    try:
        sheets.refresh_if_expired()
        if columns.written < len(columns.names):
            # Names sit at fixed positions, so writing this delivery's list from A1 leaves
            # any longer header another delivery wrote meanwhile intact.
            sheets.write_header(spreadsheet_id=spreadsheet_id, header=columns.names)
            sheet_columns.header_confirm(integration.pk, len(columns.names))
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
            "filesColumn": {"type": "integer", "nullable": True,
                            "description": "the position in columns of the file links' column"},
        },
        "required": ["spreadsheetId", "columns"],
    },
)
