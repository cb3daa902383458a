"""Google OAuth (spreadsheet scope only) and the Sheets API, at the endpoints in settings.

Sheets calls go through integrations/clients/http.py's watched pool, not httplib2's sockets:
httplib2's timeout is per read, so an API answering a byte at a time would hold a delivery past
its lease, and another worker would append the same row again. Each ``Sheets`` is one attempt,
token refresh included, ended by one deadline.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import google_auth_httplib2
import httplib2
from django.conf import settings
from google.auth.exceptions import RefreshError, TransportError
from google.oauth2.credentials import Credentials
from google_auth_oauthlib.flow import Flow
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

from integrations.clients import http

SCOPES = ["https://www.googleapis.com/auth/spreadsheets"]
SHEET_TITLE = "Submissions"
ATTEMPT_SECONDS = http.DEADLINE_SECONDS  # a delivery's deadline, well inside its lease
TOKEN_SECONDS = 10  # the OAuth code exchange (per read: requests' timeout)


class GoogleError(Exception):
    def __init__(self, message: str, *, permanent: bool, status_code: int | None = None,
                 revoked: bool = False):
        super().__init__(message)
        self.permanent = permanent
        self.status_code = status_code
        self.revoked = revoked  # the owner took FormFlow's access back: nothing more will pass


def configured() -> bool:
    return bool(settings.GOOGLE_OAUTH_CLIENT_ID and settings.GOOGLE_OAUTH_CLIENT_SECRET)


def redirect_uri() -> str:
    return f"{settings.BASE_URL}/api/auth/google/callback"


def _flow(state: str | None = None, code_verifier: str | None = None) -> Flow:
    client = {
        "web": {
            "client_id": settings.GOOGLE_OAUTH_CLIENT_ID,
            "client_secret": settings.GOOGLE_OAUTH_CLIENT_SECRET,
            "auth_uri": settings.GOOGLE_OAUTH_AUTH_URI,
            "token_uri": settings.GOOGLE_OAUTH_TOKEN_URI,
            "redirect_uris": [redirect_uri()],
        }
    }
    return Flow.from_client_config(
        client,
        scopes=SCOPES,
        redirect_uri=redirect_uri(),
        state=state,
        code_verifier=code_verifier,
        autogenerate_code_verifier=code_verifier is None,
    )


def consent_url(state: str) -> tuple[str, str]:
    """The consent screen's URL and the PKCE verifier to keep until the callback."""
    flow = _flow(state=state)
    url, _ = flow.authorization_url(access_type="offline", prompt="consent")
    return url, flow.code_verifier


@dataclass
class Tokens:
    token: str
    refresh_token: str | None
    expiry: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"token": self.token, "refreshToken": self.refresh_token, "expiry": self.expiry}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Tokens:
        return cls(values.get("token", ""), values.get("refreshToken"), values.get("expiry"))

    @classmethod
    def from_credentials(cls, creds: Credentials) -> Tokens:
        expiry = creds.expiry.replace(tzinfo=UTC).isoformat() if creds.expiry else None
        return cls(creds.token, creds.refresh_token, expiry)


def exchange_code(*, code: str, state: str, code_verifier: str) -> Tokens:
    flow = _flow(state=state, code_verifier=code_verifier)
    try:
        flow.fetch_token(code=code, timeout=TOKEN_SECONDS)
    except Exception as error:  # oauthlib raises many types; all mean the grant failed
        raise GoogleError(f"Token exchange failed: {error}", permanent=True) from None
    return Tokens.from_credentials(flow.credentials)


def credentials(tokens: Tokens) -> Credentials:
    expiry = None
    if tokens.expiry:
        # google-auth compares expiry with naive UTC datetimes
        expiry = datetime.fromisoformat(tokens.expiry).astimezone(UTC).replace(tzinfo=None)
    return Credentials(
        token=tokens.token,
        refresh_token=tokens.refresh_token,
        token_uri=settings.GOOGLE_OAUTH_TOKEN_URI,
        client_id=settings.GOOGLE_OAUTH_CLIENT_ID,
        client_secret=settings.GOOGLE_OAUTH_CLIENT_SECRET,
        scopes=SCOPES,
        expiry=expiry,
    )


def _refresh_failed(error: RefreshError) -> GoogleError:
    """A revoked grant (invalid_grant) is final; other refresh failures may pass."""
    if "invalid_grant" in str(error):
        return GoogleError("Google access was revoked; reconnect Google Sheets", permanent=True,
                           revoked=True)
    return GoogleError(f"Token refresh failed: {error}", permanent=False)


def _call(request) -> dict[str, Any]:
    try:
        return request.execute(num_retries=0)
    except RefreshError as error:
        raise _refresh_failed(error) from None
    except HttpError as error:
        status = int(error.resp.status)
        permanent = 400 <= status < 500 and status not in (408, 429)
        message = f"Sheets API HTTP {status}"
        raise GoogleError(message, permanent=permanent, status_code=status) from None
    except httplib2.HttpLib2Error as error:  # http.call's own words: timed out, refused
        raise GoogleError(f"Sheets API unreachable: {error}", permanent=False) from None
    except (TransportError, OSError) as error:
        message = f"Sheets API unreachable: {type(error).__name__}"
        raise GoogleError(message, permanent=False) from None


class _BoundedHttp:
    """httplib2's interface, as googleapiclient and google-auth-httplib2 call it, over
    ``http.call``: every call gets what is left of the attempt, and none outlives it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends = time.monotonic() + seconds
        self.timeout = seconds  # read by google_auth_httplib2.AuthorizedHttp

    def request(self, uri: str, method: str = "GET", body: Any = None,
                headers: dict | None = None, **_ignored: Any) -> tuple[httplib2.Response, bytes]:
        if isinstance(body, str):
            body = body.encode()
        try:
            status, reply_headers, content = http.call(
                method, uri, body=body, headers=dict(headers or {}),
                budget=self.ends - time.monotonic())
        except http.CallFailed as error:
            if str(error).startswith("Timed out"):  # the attempt's, not this call's share
                raise httplib2.HttpLib2Error(f"Timed out after {self.seconds:g} s") from None
            raise httplib2.HttpLib2Error(str(error)) from None
        return httplib2.Response({**reply_headers, "status": str(status)}), content


class Sheets:
    """The Sheets API for one attempt: its calls, token refresh included, end within
    ``seconds`` of its start whatever Google's side does."""

    def __init__(self, creds: Credentials, *, seconds: float | None = None) -> None:
        self.creds = creds
        self.http = _BoundedHttp(seconds or ATTEMPT_SECONDS)

    def _api(self):
        return build(
            "sheets",
            "v4",
            http=google_auth_httplib2.AuthorizedHttp(self.creds, http=self.http),
            static_discovery=True,
            cache_discovery=False,
            client_options={"api_endpoint": settings.GOOGLE_SHEETS_API_URL},
        )

    def refresh_if_expired(self) -> None:
        """Refresh ahead of the call, so the new token can be stored whatever the call does."""
        if not (self.creds.expired and self.creds.refresh_token):
            return
        try:
            self.creds.refresh(google_auth_httplib2.Request(self.http))
        except RefreshError as error:
            raise _refresh_failed(error) from None
        except TransportError as error:
            raise GoogleError(f"Token refresh failed: {error}", permanent=False) from None

    def create_spreadsheet(self, *, title: str, header: list[str]) -> dict[str, str]:
        body = {"properties": {"title": title},
                "sheets": [{"properties": {"title": SHEET_TITLE}}]}
        created = _call(self._api().spreadsheets().create(body=body))
        spreadsheet_id = created["spreadsheetId"]
        self.write_header(spreadsheet_id=spreadsheet_id, header=header)
        return {"spreadsheetId": spreadsheet_id,
                "spreadsheetUrl": created.get("spreadsheetUrl", "")}

    def write_header(self, *, spreadsheet_id: str, header: list[str]) -> None:
        request = self._api().spreadsheets().values().update(
            spreadsheetId=spreadsheet_id,
            range=f"{SHEET_TITLE}!A1",
            valueInputOption="RAW",
            body={"values": [header]},
        )
        _call(request)

    def append_row(self, *, spreadsheet_id: str, row: list[str]) -> None:
        request = self._api().spreadsheets().values().append(
            spreadsheetId=spreadsheet_id,
            range=f"{SHEET_TITLE}!A1",
            valueInputOption="RAW",
            insertDataOption="INSERT_ROWS",
            body={"values": [row]},
        )
        _call(request)
