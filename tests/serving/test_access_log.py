"""The access log never records the OAuth callback's code and state (nor the query of other
account paths); other paths keep theirs."""

import logging

import pytest

from tests.serving.conftest import EdgeServer, request


@pytest.fixture
def logged_server(transactional_db, caplog):
    caplog.set_level(logging.INFO, logger="uvicorn.access")
    server = EdgeServer(threads=2, access_log=True)
    server.start()
    yield server
    server.stop()


def test_the_oauth_callbacks_query_never_reaches_the_access_log(logged_server, caplog):
    logged_server.exchange(request(
        "GET", "/api/auth/google/callback?code=4/SECRET-GRANT&state=SIGNED-STATE"))
    logged_server.exchange(request("GET", "/dashboard/verify?email=ada@example.com"))
    logged_server.exchange(request("GET", "/healthz?probe=1"))

    lines = [r.getMessage() for r in caplog.records if r.name == "uvicorn.access"]
    assert any('"GET /api/auth/google/callback HTTP/1.1"' in line for line in lines)
    assert any('"GET /dashboard/verify HTTP/1.1"' in line for line in lines)
    assert any('"GET /healthz?probe=1 HTTP/1.1"' in line for line in lines)
    assert not any("SECRET-GRANT" in line or "SIGNED-STATE" in line for line in lines)
    assert not any("ada@example.com" in line for line in lines)
