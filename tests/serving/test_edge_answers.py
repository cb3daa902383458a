"""The edge follows the answers as they go out, over raw sockets: a client that half-closes
gets every answer and then the close at once, whatever the answers were (HEAD, 100 Continue,
streamed); a late pipelined request waits for the answer being made."""

from __future__ import annotations

import ast
import logging
import socket
import time
from pathlib import Path

import pytest

from submissions.models import Submission
from tests.serving.conftest import EdgeServer, read_all, read_answer, request

HEALTH = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
# An answer with a Content-Length and, to HEAD, no body: the app's 401 without an API key.
HEAD = b"HEAD /api/v1/forms HTTP/1.1\r\nHost: localhost\r\n\r\n"


@pytest.fixture(params=["asyncio", "uvloop"])
def edge(request, transactional_db, settings):
    """As tests/serving/conftest.py's, and on uvloop too, the loop production runs."""
    settings.SERVER_HEADER_TIMEOUT = 1
    settings.SERVER_BODY_TIMEOUT = 2
    server = EdgeServer(threads=2, loop=request.param)
    server.start()
    yield server
    server.stop()


def half_closed(edge, data: bytes) -> tuple[bytes, float]:
    """What the server sends after ``data`` and a half-close, and how long until it closed."""
    with edge.connect() as conn:
        conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)
        started = time.monotonic()
        raw = read_all(conn)
    return raw, time.monotonic() - started


def test_answers_to_head_and_get_then_the_close_at_once(edge):
    raw, waited = half_closed(edge, HEAD + HEALTH + HEAD)
    assert raw.count(b"HTTP/1.1 401") == 2
    assert raw.count(b"HTTP/1.1 200") == 1
    assert raw.endswith(b"\r\n\r\n")  # the last answer, to HEAD, ends with its head
    assert b"content-length: 0" not in raw.split(b"\r\n\r\n", 1)[0]
    assert waited < 1  # not the keep-alive timeout (2 s here)


def test_a_body_sent_after_100_continue_is_answered(edge, form):
    body = b'{"name": "Ada"}'
    head = request("POST", f"/api/v1/f/{form.slug}", b"", {
        "Content-Type": "application/json", "Accept": "application/json",
        "Expect": "100-continue", "Connection": "keep-alive"}, length=len(body))
    with edge.connect() as conn:
        conn.sendall(head)
        assert conn.recv(1024).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        conn.sendall(body)
        conn.shutdown(socket.SHUT_WR)
        started = time.monotonic()
        raw = read_all(conn)
        waited = time.monotonic() - started
    assert raw.startswith(b"HTTP/1.1 200")
    assert waited < 1
    assert Submission.objects.filter(form=form).count() == 1


def test_a_streamed_answer_then_a_half_close(edge, form, user):
    from tests.conftest import bearer

    Submission.objects.bulk_create(
        [Submission(form=form, data=[["note", "y" * 300]]) for _ in range(300)])
    get = request("GET", f"/api/v1/forms/{form.pk}/export?format=json",
                  headers={"Authorization": bearer(user), "Connection": "keep-alive"})
    raw, waited = half_closed(edge, get)
    assert raw.startswith(b"HTTP/1.1 200")
    assert raw.endswith(b"\r\n0\r\n\r\n")  # the last chunk: the answer is whole
    assert waited < 1.5


def test_a_request_after_an_answer_then_silence_gets_408(edge):
    with edge.connect() as conn:
        conn.sendall(HEALTH + b"GET /healthz HTTP/1.1\r\nHost: loc")
        raw = read_all(conn)
    assert raw.startswith(b"HTTP/1.1 200")
    assert b"HTTP/1.1 408 Request Timeout\r\n" in raw
    assert raw.endswith(b'{"error": "request_timeout", '
                        b'"message": "The request was not received in time."}')


def test_a_late_pipelined_request_waits_for_the_answer_being_made(edge, form, user, settings):
    """The export takes longer than the next request's header deadline: the export is sent
    whole, then the connection closes, with no 408 in the middle of it."""
    from tests.conftest import bearer

    settings.SERVER_HEADER_TIMEOUT = 0.01
    Submission.objects.bulk_create(
        [Submission(form=form, data=[["note", "z" * 1000]]) for _ in range(2000)])
    get = request("GET", f"/api/v1/forms/{form.pk}/export?format=json",
                  headers={"Authorization": bearer(user), "Connection": "keep-alive"})
    with edge.connect() as conn:
        conn.sendall(get + b"GET /healthz HTTP/1.1\r\n")
        raw = read_all(conn)
    assert raw.startswith(b"HTTP/1.1 200")
    assert raw.endswith(b"\r\n0\r\n\r\n")
    assert b"408" not in raw.split(b"\r\n\r\n", 1)[0]


def test_an_upgrade_is_answered_as_plain_http_with_no_warning(edge, caplog):
    caplog.set_level(logging.INFO, logger="uvicorn.error")
    answer = edge.exchange(request("GET", "/healthz", headers={
        "Connection": "Upgrade", "Upgrade": "websocket"}))
    assert answer.status == 200
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_refused_request_reaches_no_app_on_a_kept_alive_connection(edge, form):
    """The first request is answered; the second, cut off by a half-close, is refused by the
    edge alone."""
    body = b'{"name": "Ada"}'
    first = request("POST", f"/api/v1/f/{form.slug}", body, {
        "Content-Type": "application/json", "Accept": "application/json",
        "Connection": "keep-alive"})
    with edge.connect() as conn:
        conn.sendall(first)
        first_answer = conn.recv(65536)
        while not first_answer.endswith(b"}"):  # the head and the body may come apart
            first_answer += conn.recv(65536)
        conn.sendall(request("POST", f"/api/v1/f/{form.slug}", body[:5], {
            "Content-Type": "application/json", "Accept": "application/json"},
            length=len(body)))
        conn.shutdown(socket.SHUT_WR)
        answer = read_answer(conn)
    assert first_answer.startswith(b"HTTP/1.1 200")
    assert answer.status == 400
    assert answer.json()["error"] == "incomplete_body"
    assert Submission.objects.filter(form=form).count() == 1


def test_the_edge_takes_one_name_from_inside_uvicorn():
    """uvicorn's public surface is its documented settings and its top-level package; the edge
    builds uvicorn's httptools protocol and drives it as an asyncio.Protocol, nothing more."""
    imported = set()
    for path in (Path(__file__).parents[2] / "edge").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("uvicorn"):
                imported.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names
                                if alias.name.startswith("uvicorn"))
    assert imported == {"uvicorn_worker.UvicornWorker",
                        "uvicorn.protocols.http.httptools_impl.HttpToolsProtocol"}
