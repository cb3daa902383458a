"""The web server's edge, over raw sockets: slow and broken clients, limits, JSON errors."""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time

import pytest

from submissions.models import Submission
from tests.serving.conftest import read_all, read_answer, request

JSON = {"Content-Type": "application/json", "Accept": "application/json"}


def submission(form, fields=None) -> bytes:
    return request("POST", f"/api/v1/f/{form.slug}", json.dumps(fields or {"name": "Ada"}).encode(),
                   JSON)


def assert_json_error(answer, status: int, code: str) -> None:
    assert answer.status == status
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"] == code
    assert answer.json()["message"]


def test_a_whole_submission_is_stored(edge, form):
    answer = edge.exchange(submission(form, {"name": "Ada", "note": "é ✓"}))
    assert answer.status == 200
    assert Submission.objects.get(form=form).fields == {"name": "Ada", "note": "é ✓"}


def test_a_silent_connection_gets_408_after_the_header_deadline(edge):
    with edge.connect() as conn:
        started = time.monotonic()
        answer = read_answer(conn)
        waited = time.monotonic() - started
    assert_json_error(answer, 408, "request_timeout")
    assert 0.9 <= waited < 3


def test_headers_sent_a_byte_at_a_time_are_cut_off(edge):
    data = request("GET", "/healthz")
    with edge.connect() as conn:
        started = time.monotonic()
        for byte in data[:-4]:
            conn.sendall(bytes([byte]))
            if select.select([conn], [], [], 0.1)[0]:
                break  # the server has answered
        answered = time.monotonic() - started
        answer = read_answer(conn)
    assert_json_error(answer, 408, "request_timeout")
    assert 0.9 <= answered < 2


@pytest.mark.parametrize("kind", ["json", "urlencoded", "multipart"])
def test_a_body_cut_off_by_a_half_close_is_400_and_not_stored(edge, form, kind):
    bodies = {
        "json": ("application/json", b'{"name": "Ada", "note": "the rest never c'),
        "urlencoded": ("application/x-www-form-urlencoded", b"name=Ada&note=the+rest"),
        "multipart": ("multipart/form-data; boundary=XyZ",
                      b'--XyZ\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n'
                      b'--XyZ\r\nContent-Disposition: form-data; name="note"\r\n\r\nhal'),
    }
    content_type, body = bodies[kind]
    data = request("POST", f"/api/v1/f/{form.slug}", body,
                   {"Content-Type": content_type, "Accept": "application/json"},
                   length=len(body) + 40)
    answer = edge.exchange(data, half_close=True)
    assert_json_error(answer, 400, "incomplete_body")
    assert not Submission.objects.filter(form=form).exists()


def test_a_body_that_stops_coming_gets_408_and_is_not_stored(edge, form):
    body = b'{"name": "Ada"'
    data = request("POST", f"/api/v1/f/{form.slug}", body, JSON, length=len(body) + 10)
    started = time.monotonic()
    answer = edge.exchange(data)
    assert_json_error(answer, 408, "request_timeout")
    assert 1.9 <= time.monotonic() - started < 4
    assert not Submission.objects.filter(form=form).exists()


def test_a_whole_request_then_a_half_close_is_answered(edge, form):
    answer = edge.exchange(submission(form), half_close=True)
    assert answer.status == 200
    assert Submission.objects.filter(form=form).count() == 1


def test_slow_clients_hold_no_thread(edge, form):
    """Both threads of the pool would be held by two slow bodies under a threaded server; here
    a normal submission is answered at once while they trickle."""
    slow = []
    for _ in range(4):
        conn = edge.connect()
        head = request("POST", f"/api/v1/f/{form.slug}", b"", JSON, length=200)
        conn.sendall(head + b'{"name": ')
        slow.append(conn)
    try:
        started = time.monotonic()
        answer = edge.exchange(submission(form))
        assert answer.status == 200
        assert time.monotonic() - started < 1
    finally:
        for conn in slow:
            conn.close()
    assert Submission.objects.filter(form=form).count() == 1


@pytest.mark.parametrize("value", ["abc", "-1", "1, 2", "99999999999999999999999"])
def test_a_malformed_content_length_is_a_json_400(edge, form, value):
    data = request("POST", f"/api/v1/f/{form.slug}", b"{}", {**JSON, "Content-Length": value})
    assert_json_error(edge.exchange(data), 400, "bad_request")


def test_two_content_lengths_or_one_with_chunked_are_a_json_400(edge, form):
    head = f"POST /api/v1/f/{form.slug} HTTP/1.1\r\nHost: localhost\r\n"
    for extra in ("Content-Length: 2\r\nContent-Length: 3\r\n",
                  "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n"):
        answer = edge.exchange(f"{head}{extra}\r\n{{}}".encode())
        assert_json_error(answer, 400, "bad_request")
    assert not Submission.objects.filter(form=form).exists()


def test_request_line_garbage_is_a_json_400(edge):
    assert_json_error(edge.exchange(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"),
                      400, "bad_request")


def test_a_long_url_is_served_up_to_16_kib_then_414(edge):
    served = edge.exchange(request("GET", "/api/v1/submissions?cursor=" + "a" * 6000))
    assert served.status == 401  # the app's own answer: no API key
    too_long = edge.exchange(request("GET", "/api/v1/forms?x=" + "a" * 17000))
    assert_json_error(too_long, 414, "uri_too_long")


def test_a_long_token_is_served_and_a_huge_head_is_431(edge):
    served = edge.exchange(request("GET", "/api/v1/forms", headers={
        "Authorization": "Bearer " + "a" * 10_000}))
    assert served.status == 401
    assert served.headers["content-type"] == "application/json"
    huge = edge.exchange(request("GET", "/api/v1/forms", headers={"X-Pad": "a" * 70_000}))
    assert_json_error(huge, 431, "headers_too_large")
    many = {f"X-Field-{number}": "1" for number in range(120)}
    assert_json_error(edge.exchange(request("GET", "/api/v1/forms", headers=many)),
                      431, "headers_too_large")


def test_a_head_that_never_ends_is_431_not_unbounded(edge):
    with edge.connect() as conn:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: ")
        try:
            for _ in range(100):
                conn.sendall(b"a" * 1024)
        except OSError:
            pass
        answer = read_answer(conn)
    assert_json_error(answer, 431, "headers_too_large")


def test_past_the_connection_cap_the_answer_is_503_with_retry_after(edge, settings):
    settings.SERVER_MAX_CONNECTIONS = 3
    held = [edge.connect() for _ in range(3)]
    try:
        time.sleep(0.2)
        with edge.connect() as conn:
            answer = read_answer(conn)  # refused on arrival, before it sends anything
        assert_json_error(answer, 503, "service_unavailable")
        assert answer.headers["retry-after"] == "5"
    finally:
        for conn in held:
            conn.close()
    time.sleep(0.2)
    assert edge.exchange(request("GET", "/healthz")).status == 200


def test_a_chunked_body_is_stored_whole(edge, form):
    body = json.dumps({"name": "Ada", "note": "x" * 5000}).encode()
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 700]), body[i:i + 700])
                      for i in range(0, len(body), 700))
    data = request("POST", f"/api/v1/f/{form.slug}", b"",
                   {**JSON, "Transfer-Encoding": "chunked"}) + chunks + b"0\r\n\r\n"
    assert edge.exchange(data).status == 200
    assert Submission.objects.get(form=form).fields["note"] == "x" * 5000


def test_a_body_over_10_mib_is_413_and_not_stored(edge, form):
    body = b'{"name": "' + b"a" * (10 * 1024 * 1024) + b'"}'
    with edge.connect() as conn:
        conn.sendall(request("POST", f"/api/v1/f/{form.slug}", b"", JSON, length=len(body)))
        with contextlib.suppress(OSError):  # the server may answer and close before the end
            conn.sendall(body)
        answer = read_answer(conn)
    assert_json_error(answer, 413, "payload_too_large")
    assert not Submission.objects.filter(form=form).exists()


def test_kept_alive_and_pipelined_requests_are_answered_in_order(edge):
    one = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
    with edge.connect() as conn:
        conn.sendall(one + one + request("GET", "/api/v1/nothing-here"))
        raw = read_all(conn)
    assert raw.count(b"HTTP/1.1 200") == 2
    assert raw.rindex(b"HTTP/1.1 404") > raw.rindex(b"HTTP/1.1 200")


def test_an_export_streams_through_the_server(edge, form, user):
    from tests.conftest import bearer

    rows = [Submission(form=form, data=[["name", f"n{i}"], ["note", "y" * 300]])
            for i in range(600)]
    Submission.objects.bulk_create(rows)
    answer = edge.exchange(request("GET", f"/api/v1/forms/{form.pk}/export?format=json",
                                   headers={"Authorization": bearer(user)}))
    assert answer.status == 200
    assert answer.headers["transfer-encoding"] == "chunked"
    exported = json.loads(answer.body)
    assert len(exported) == 600
    assert {row["fields"]["name"] for row in exported} == {f"n{i}" for i in range(600)}


def test_a_client_that_leaves_mid_export_frees_its_thread(edge, form, user):
    from tests.conftest import bearer

    Submission.objects.bulk_create(
        [Submission(form=form, data=[["note", "z" * 2000]]) for _ in range(3000)])
    conn = edge.connect()
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    conn.sendall(request("GET", f"/api/v1/forms/{form.pk}/export?format=csv",
                         headers={"Authorization": bearer(user)}))
    conn.recv(1024)
    conn.close()
    # The export stops, so both threads of the pool are free again: each takes one half of
    # a barrier.
    barrier = threading.Barrier(2)
    halves = [edge.bridge.executor.submit(barrier.wait, 10) for _ in range(2)]
    assert [half.result(15) in (0, 1) for half in halves] == [True, True]


def test_an_answer_has_no_server_header_and_one_content_length(edge):
    raw = edge.exchange(request("GET", "/healthz"))
    assert "server" not in raw.headers
    with edge.connect() as conn:
        conn.sendall(request("GET", "/healthz"))
        head = read_all(conn).split(b"\r\n\r\n")[0].lower()
    assert head.count(b"content-length") == 1


def test_a_stopped_server_leaves_no_session_bounds_to_later_tests(edge):
    """The server binds the web's session bounds as a web process does, and takes them back
    when it stops: later tests run under the same bounds in any order."""
    from django.core.signals import request_started
    from django.db.backends.signals import connection_created

    from core.infra import dbtimeouts

    def bound() -> set:
        uids = {key[0] for key, *_ in connection_created.receivers}
        uids |= {key[0] for key, *_ in request_started.receivers}
        return uids & {dbtimeouts.DISPATCH_UID, dbtimeouts.SQLITE_DISPATCH_UID,
                       dbtimeouts.CUT_DISPATCH_UID, dbtimeouts.REQUEST_DISPATCH_UID}

    assert dbtimeouts.REQUEST_DISPATCH_UID in bound()
    edge.stop()
    edge.stop = lambda: None  # the fixture's own stop, already done

    assert bound() == set()
