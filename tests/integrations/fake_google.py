"""A local stand-in for Google's OAuth token endpoint and the Sheets v4 API."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

from tests.fakes import FakeServer, Recorded, Reply

SCOPE = "https://www.googleapis.com/auth/spreadsheets"


@dataclass
class GoogleState:
    code_challenge: str | None = None
    valid_refresh_tokens: set[str] = field(default_factory=lambda: {"rt-1"})
    access_tokens: set[str] = field(default_factory=lambda: {"at-1"})
    headers: dict[str, list[str]] = field(default_factory=dict)  # spreadsheet -> header row
    rows: dict[str, list[list[str]]] = field(default_factory=dict)
    value_options: list[str] = field(default_factory=list)
    failing_header_writes: int = 0  # answer this many header writes with a 503
    before_header_write: Callable[[], None] | None = None  # runs once, before the next one
    issued = 1


class FakeGoogle(FakeServer):
    def __init__(self) -> None:
        self.state = GoogleState()
        super().__init__(self.route)

    def route(self, request: Recorded) -> Reply:
        path = unquote(urlsplit(request.path).path)
        if path == "/token":
            return self.token(parse_qs(request.body.decode()))
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if token not in self.state.access_tokens:
            return Reply(401, {"error": {"code": 401, "message": "invalid token"}})
        query = parse_qs(urlsplit(request.path).query)
        self.state.value_options += query.get("valueInputOption", [])
        if path == "/v4/spreadsheets" and request.method == "POST":
            title = request.json()["properties"]["title"]
            sheet = f"sheet-{len(self.state.headers) + 1}"
            self.state.headers[sheet], self.state.rows[sheet] = [], []
            return Reply(
                200,
                {
                    "spreadsheetId": sheet,
                    "spreadsheetUrl": f"https://sheets/{sheet}",
                    "properties": {"title": title},
                },
            )
        parts = path.split("/")  # /v4/spreadsheets/{id}/values/{range}[:append]
        sheet, cell = parts[3], parts[5]
        values = request.json()["values"]
        if cell.endswith(":append"):
            self.state.rows[sheet] += values
            return Reply(200, {"spreadsheetId": sheet})
        return self.write_header(sheet, cell, values[0])

    def write_header(self, sheet: str, cell: str, names: list[str]) -> Reply:
        """As Sheets does: only the cells written change; cells to their right stay."""
        hook, self.state.before_header_write = self.state.before_header_write, None
        if hook:
            hook()
        if self.state.failing_header_writes:
            self.state.failing_header_writes -= 1
            return Reply(503, {"error": {"code": 503, "message": "backend error"}})
        assert cell == "Submissions!A1", cell
        header = self.state.headers[sheet]
        self.state.headers[sheet] = names + header[len(names) :]
        return Reply(200, {"spreadsheetId": sheet})

    def token(self, form: dict[str, list[str]]) -> Reply:
        grant = form["grant_type"][0]
        if grant == "authorization_code":
            verifier = form.get("code_verifier", [""])[0]
            digest = hashlib.sha256(verifier.encode()).digest()
            challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            if form["code"][0] != "good-code" or challenge != self.state.code_challenge:
                return Reply(400, {"error": "invalid_grant"})
            return Reply(
                200,
                {
                    "access_token": "at-1",
                    "refresh_token": "rt-1",
                    "expires_in": 3600,
                    "token_type": "Bearer",
                    "scope": SCOPE,
                },
            )
        if form["refresh_token"][0] not in self.state.valid_refresh_tokens:
            return Reply(
                400, {"error": "invalid_grant", "error_description": "Token has been revoked."}
            )
        self.state.issued += 1
        token = f"at-{self.state.issued}"
        self.state.access_tokens.add(token)
        return Reply(
            200, {"access_token": token, "expires_in": 3600, "token_type": "Bearer", "scope": SCOPE}
        )
