"""The access log never records a query string (the OAuth callback's code and state, a signed
download link's sig, an erasure's address, search terms): the path only, and never a mailed
link's token."""

import logging
import re

import pytest

from tests.serving.conftest import EdgeServer, request


@pytest.fixture
def logged_server(transactional_db, caplog):
    caplog.set_level(logging.INFO, logger="uvicorn.access")
    server = EdgeServer(threads=2, access_log=True)
    server.start()
    yield server
    server.stop()


def test_no_query_string_reaches_the_access_log(logged_server, caplog):
    logged_server.exchange(request(
        "GET", "/api/auth/google/callback?code=4/SECRET-GRANT&state=SIGNED-STATE"))
    logged_server.exchange(request("GET", "/dashboard/verify?email=ada@example.com"))
    logged_server.exchange(request("GET", "/api/v1/files/abc123?sig=SIGNED-LINK"))
    logged_server.exchange(request("GET", "/dashboard/forms/f1/search?q=PRIVATE-TERM"))
    logged_server.exchange(request("GET", "/healthz?probe=1"))
    logged_server.exchange(request("GET", "/dashboard/confirm/LIVE-LINK-TOKEN"))
    logged_server.exchange(request("GET", "/dashboard/invitations/LIVE-INVITE-TOKEN"))

    lines = [r.getMessage() for r in caplog.records if r.name == "uvicorn.access"]
    assert any('"GET /api/auth/google/callback HTTP/1.1"' in line for line in lines)
    assert any('"GET /dashboard/verify HTTP/1.1"' in line for line in lines)
    assert any('"GET /api/v1/files/abc123 HTTP/1.1"' in line for line in lines)
    assert any('"GET /healthz HTTP/1.1"' in line for line in lines)
    assert any('"GET /dashboard/confirm/<token> HTTP/1.1"' in line for line in lines)
    assert any('"GET /dashboard/invitations/<token> HTTP/1.1"' in line for line in lines)
    secrets = ("SECRET-GRANT", "SIGNED-STATE", "ada@example.com", "SIGNED-LINK", "PRIVATE-TERM",
               "LIVE-LINK-TOKEN", "LIVE-INVITE-TOKEN", "?")
    assert not any(secret in line for line in lines for secret in secrets)


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_each_access_line_carries_the_requests_duration(transactional_db, caplog, loop):
    """On both loops the production worker may run (uvloop where it is installed)."""
    caplog.set_level(logging.INFO, logger="uvicorn.access")
    server = EdgeServer(threads=2, access_log=True, loop=loop)
    server.start()
    try:
        server.exchange(request("GET", "/healthz"))
    finally:
        server.stop()

    records = [r for r in caplog.records if r.name == "uvicorn.access"]
    assert len(records) == 1
    line = records[0].getMessage()
    assert re.fullmatch(r'.* - "GET /healthz HTTP/1\.1" 200 \d+\.\d{3}s', line), line
    assert 0 < records[0].duration_seconds < 5
    assert float(line.rsplit(" ", 1)[1].removesuffix("s")) == pytest.approx(
        records[0].duration_seconds, abs=0.001)
