#!/usr/bin/env python3
"""Hostile HTTP against a running FormFlow, over raw sockets. Standard library only.

    python3 scripts/hostile.py --base-url URL --token ACCESS_TOKEN --form-id ID [--slow]

Every case is sent as raw bytes, so no client library tidies it up, and has an expected status
and error code. Afterwards the form must hold exactly the submissions sent on purpose. The
summary counts 5xx answers and errors under /api/ that are not JSON; both must be 0.

--slow adds the slow-client test: 200 connections that trickle headers, trickle bodies or sit
silent (each reopened as soon as the server closes it), while a probe submits once a second;
every probe must succeed, with p99 under 1 s.

scripts/smoke.py runs both against the production setup and dev.py start, in CI.
"""

from __future__ import annotations

import argparse
import json
import random
import selectors
import socket
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field

BOUNDARY = "HostileBoundary"


class HostileFailed(Exception):
    pass


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def code(self) -> str | None:
        try:
            return json.loads(self.body).get("error")
        except (ValueError, AttributeError):
            return None


@dataclass
class Target:
    host: str
    port: int
    token: str
    form_id: str
    slug: str = ""
    api_key: str = ""
    failures: list[str] = field(default_factory=list)
    server_errors: int = 0
    non_json_errors: int = 0
    sent: int = 0

    def connect(self, timeout: float = 20) -> socket.socket:
        return socket.create_connection((self.host, self.port), timeout=timeout)

    def exchange(self, data: bytes, half_close: bool = False, timeout: float = 20) -> Answer:
        with self.connect(timeout) as conn:
            try:
                conn.sendall(data)
                if half_close:
                    conn.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the server may answer and close before it has read everything
            return parse(read_all(conn))


def read_all(conn: socket.socket) -> bytes:
    parts = []
    try:
        while chunk := conn.recv(65536):
            parts.append(chunk)
    except ConnectionResetError:
        pass
    return b"".join(parts)


def parse(raw: bytes) -> Answer:
    if not raw:
        return Answer(0, {}, b"")
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return Answer(int(lines[0].split()[1]), headers, body)


def request(method: str, path: str, body: bytes = b"", headers: dict | None = None,
            length: int | None = None) -> bytes:
    fields = {"Host": "localhost", "Connection": "close", "Accept": "application/json",
              **(headers or {})}
    if body or length is not None:
        fields.setdefault("Content-Length", str(len(body) if length is None else length))
    head = "".join(f"{name}: {value}\r\n" for name, value in fields.items())
    return f"{method} {path} HTTP/1.1\r\n{head}\r\n".encode() + body


def part(name: str, value: str, filename: str | None = None, boundary: str = BOUNDARY) -> str:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
    return f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n{value}\r\n"


def multipart(parts: list[str], boundary: str = BOUNDARY) -> bytes:
    return ("".join(parts) + f"--{boundary}--\r\n").encode()


# --- The cases --------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    data: bytes
    status: int
    code: str | None = None
    half_close: bool = False


def cases(target: Target) -> list[Case]:
    public = f"/api/v1/f/{target.slug}"
    owner = {"Authorization": f"Bearer {target.token}"}
    as_json = {"Content-Type": "application/json"}

    def submit(body: bytes, content_type: str, **kwargs) -> bytes:
        return request("POST", public, body, {"Content-Type": content_type}, **kwargs)

    def with_head(extra: str, body: bytes = b"{}") -> bytes:
        return (f"POST {public} HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n"
                f"Content-Type: application/json\r\n{extra}\r\n").encode() + body

    boundary = f"multipart/form-data; boundary={BOUNDARY}"
    json_cut = b'{"name": "Ada", "note": "never fini'
    form_cut = b"name=Ada&note=never+fini"
    multi_cut = (part("name", "Ada") + f"--{BOUNDARY}\r\nContent-Disposition: form-da").encode()
    deep = b"[" * 10_000 + b"]" * 10_000
    since = "/api/v1/submissions?formId={}&since={}"
    return [
        # The HTTP framing, answered by the server's edge.
        Case("content-length abc", with_head("Content-Length: abc\r\n"), 400, "bad_request"),
        Case("content-length -1", with_head("Content-Length: -1\r\n"), 400, "bad_request"),
        Case("two content-lengths", with_head("Content-Length: 2\r\nContent-Length: 3\r\n"),
             400, "bad_request"),
        Case("content-length and chunked",
             with_head("Content-Length: 2\r\nTransfer-Encoding: chunked\r\n"), 400,
             "bad_request"),
        Case("bad chunk size",
             with_head("Transfer-Encoding: chunked\r\n", b"zz\r\n{}\r\n0\r\n\r\n"), 400,
             "bad_request"),
        Case("garbage request line", b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n", 400,
             "bad_request"),
        Case("URL of 20 KB", request("GET", "/api/v1/forms?x=" + "a" * 20_000), 414,
             "uri_too_long"),
        Case("URL of 6 KB (a long cursor)",
             request("GET", "/api/v1/submissions?cursor=" + "a" * 6000), 401,
             "not_authenticated"),
        Case("header of 10 KB (a long token)",
             request("GET", "/api/v1/forms", headers={"Authorization": "Bearer " + "a" * 10_000}),
             401, "authentication_failed"),
        Case("head of 70 KB", request("GET", "/api/v1/forms", headers={"X-Pad": "a" * 70_000}),
             431, "headers_too_large"),
        Case("150 header fields",
             request("GET", "/api/v1/forms", headers={f"X-F{i}": "1" for i in range(150)}), 431,
             "headers_too_large"),
        # Bodies that end before their Content-Length, then half-close.
        Case("cut JSON body", submit(json_cut, "application/json", length=len(json_cut) + 50),
             400, "incomplete_body", half_close=True),
        Case("cut urlencoded body", submit(form_cut, "application/x-www-form-urlencoded",
                                           length=len(form_cut) + 50),
             400, "incomplete_body", half_close=True),
        Case("cut multipart body", submit(multi_cut, boundary, length=len(multi_cut) + 50), 400,
             "incomplete_body", half_close=True),
        Case("cut body on signup", request("POST", "/api/auth/signup", b'{"email": "a@',
                                           as_json, length=60),
             400, "incomplete_body", half_close=True),
        # Bodies the app must refuse cleanly.
        Case("multipart without a boundary",
             submit(multipart([part("name", "Ada")]), "multipart/form-data"), 400,
             "malformed_body"),
        Case("multipart boundary of 300", submit(
            multipart([part("name", "Ada", boundary="b" * 300)], "b" * 300),
            "multipart/form-data; boundary=" + "b" * 300), 400, "malformed_body"),
        Case("multipart with another boundary",
             submit(multipart([part("name", "Ada")]), "multipart/form-data; boundary=Other"),
             400, "malformed_body"),
        Case("multipart second part cut", submit(multi_cut, boundary), 400, "malformed_body"),
        Case("multipart with 1,000 file parts", submit(
            multipart([part(f"f{i}", "x", filename="a.txt") for i in range(1000)]), boundary),
             413, "too_many_fields"),
        Case("body over 10 MiB", submit(b"name=" + b"a" * (10 * 1024 * 1024),
                                        "application/x-www-form-urlencoded"), 413,
             "payload_too_large"),
        Case("JSON 10,000 deep on signup", request("POST", "/api/auth/signup", deep, as_json),
             400, "malformed_body"),
        Case("JSON 10,000 deep on form create",
             request("POST", "/api/v1/forms", deep, {**as_json, **owner}), 400, "malformed_body"),
        Case("cut JSON on form PATCH", request("PATCH", f"/api/v1/forms/{target.form_id}",
                                               b'{"name":"x","name":[', {**as_json, **owner}),
             400, "malformed_body"),
        Case("NUL in a form id", request("GET", "/api/v1/forms/ab%00cd", headers=owner), 404,
             "not_found"),
        Case("since at the start of the calendar", request(
            "GET", since.format(target.form_id, urllib.parse.quote("0001-01-01T00:00:00+05:30")),
            headers={"Authorization": f"Bearer {target.api_key}"}), 200),
        Case("since at the end of the calendar", request(
            "GET", since.format(target.form_id, urllib.parse.quote("9999-12-31T23:59:59-05:00")),
            headers={"Authorization": f"Bearer {target.api_key}"}), 200),
    ]


def check_case(target: Target, case: Case) -> None:
    answer = target.exchange(case.data, half_close=case.half_close)
    target.sent += 1
    if answer.status >= 500 or answer.status == 0:
        target.server_errors += 1
    is_json = answer.headers.get("content-type", "").startswith("application/json")
    if answer.status >= 400 and not is_json:
        target.non_json_errors += 1
    if answer.status != case.status or (case.code and answer.code() != case.code):
        target.failures.append(f"{case.name}: expected {case.status} {case.code or ''}, got "
                               f"{answer.status} {answer.body[:200]!r}")
    else:
        print(f"hostile: {case.name}: {answer.status} {case.code or ''}", flush=True)


def silent_connection(target: Target, header_timeout: float) -> None:
    with target.connect(timeout=header_timeout + 10) as conn:
        started = time.monotonic()
        answer = parse(read_all(conn))
        waited = time.monotonic() - started
    target.sent += 1
    if answer.status != 408 or answer.code() != "request_timeout" or waited > header_timeout + 2:
        target.failures.append(f"silent connection: got {answer.status} after {waited:.1f}s")
    else:
        print(f"hostile: silent connection: 408 after {waited:.1f}s", flush=True)


# --- Setup and counting through the API -------------------------------------------------------


def api(target: Target, method: str, path: str, body=None, token: str | None = None):
    data = json.dumps(body).encode() if body is not None else b""
    headers = {"Authorization": f"Bearer {token or target.token}"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    answer = target.exchange(request(method, path, data, headers))
    return answer.status, json.loads(answer.body or b"null")


def stored(target: Target) -> int:
    status, body = api(target, "GET", f"/api/v1/forms/{target.form_id}/submissions")
    if status != 200:
        raise HostileFailed(f"listing submissions answered {status}")
    return body["total"]


def prepare(target: Target) -> None:
    status, form = api(target, "GET", f"/api/v1/forms/{target.form_id}")
    if status != 200:
        raise HostileFailed(f"the form answered {status}")
    target.slug = form["slug"]
    key_body = {"name": "hostile", "forms": [target.form_id]}
    status, key = api(target, "POST", "/api/v1/api-keys", key_body)
    if status != 201:
        raise HostileFailed(f"creating an API key answered {status}")
    target.api_key = key["key"]


# --- Uploads ----------------------------------------------------------------------------------

UPLOAD_LIMITS = {"maxBytes": 65536, "maxFiles": 2, "types": ["image/*", "application/pdf"]}
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 64
HTML_PAGE = b"<!doctype html><html><body><script>alert(document.cookie)</script></body></html>"
ZIP = b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + b"\x00" * 64


def file_part(name: str, filename: str, data: bytes, content_type: str = "image/png",
              boundary: str = BOUNDARY) -> bytes:
    return (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; "
            f"filename=\"{filename}\"\r\nContent-Type: {content_type}\r\n\r\n").encode() + (
        data + b"\r\n")


def files_body(*parts: bytes) -> bytes:
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


def upload_cases(slug: str) -> list[Case]:
    def submit(body: bytes, **kwargs) -> bytes:
        return request("POST", f"/api/v1/f/{slug}", body,
                       {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}, **kwargs)

    cut = file_part("photo", "a.png", PNG)[:-40]
    return [
        Case("upload: an HTML page named .png", submit(files_body(
            file_part("photo", "cat.png", HTML_PAGE))), 415, "file_type_not_allowed"),
        Case("upload: a zip bomb's name and bytes", submit(files_body(
            file_part("photo", "42.zip.png", ZIP, "image/png"))), 415, "file_type_not_allowed"),
        Case("upload: a file over maxBytes", submit(files_body(
            file_part("photo", "big.png", PNG + b"\x00" * 65536))), 413, "file_too_large"),
        Case("upload: three files of two", submit(files_body(
            *(file_part(f"p{i}", f"{i}.png", PNG) for i in range(3)))), 413, "too_many_files"),
        Case("upload: a file part cut short", submit(cut, length=len(cut) + 100),
             400, "incomplete_body", half_close=True),
        Case("upload: a body that ends inside a file part", submit(cut), 400, "malformed_body"),
        Case("upload: the last boundary missing", submit(file_part("photo", "a.png", PNG)), 400,
             "malformed_body"),
    ]


def uploads(target: Target) -> None:
    """A form that keeps files, sent what should never be stored; then one file whose name
    walks up the tree, which must be stored under a name of the service's own and
    downloaded as a plain attachment."""
    status, form = api(target, "POST", "/api/v1/forms",
                       {"name": "hostile uploads", "fileUploads": UPLOAD_LIMITS})
    if status != 201:
        raise HostileFailed(f"creating a form with uploads answered {status}")
    try:
        for case in upload_cases(form["slug"]):
            check_case(target, case)
        listed = f"/api/v1/forms/{form['_id']}/submissions"
        if api(target, "GET", listed)[1]["total"] != 0:
            target.failures.append("a refused upload stored a submission")
        traversal(target, form)
    finally:
        api(target, "DELETE", f"/api/v1/forms/{form['_id']}")


def traversal(target: Target, form: dict) -> None:
    body = files_body(file_part("photo", "../../etc/passwd", PNG))
    answer = target.exchange(request("POST", f"/api/v1/f/{form['slug']}", body, {
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}))
    target.sent += 1
    if answer.status != 200:
        target.failures.append(f"upload: a traversal name answered {answer.status}")
        return
    status, page = api(target, "GET", f"/api/v1/forms/{form['_id']}/submissions")
    files = page["data"][0]["files"] if status == 200 and page["data"] else []
    if len(files) != 1 or "/" in files[0]["name"] or files[0]["contentType"] != "image/png":
        target.failures.append(f"upload: a traversal name was kept as {files!r}")
        return
    link = urllib.parse.urlsplit(files[0]["url"])
    got = target.exchange(request("GET", f"{link.path}?{link.query}"))
    target.sent += 1
    disposition = got.headers.get("content-disposition", "")
    if (got.status != 200 or got.body != PNG or not disposition.startswith("attachment;")
            or "/" in disposition or got.headers.get("x-content-type-options") != "nosniff"
            or "sandbox" not in got.headers.get("content-security-policy", "")):
        target.failures.append(f"upload: the download answered {got.status} {got.headers}")
    else:
        print("hostile: upload: a traversal name is stored as the service's own", flush=True)


def run(base: str, token: str, form_id: str, header_timeout: float = 10) -> None:
    parts = urllib.parse.urlsplit(base)
    target = Target(parts.hostname or "127.0.0.1", parts.port or 80, token, form_id)
    prepare(target)
    before = stored(target)
    for case in cases(target):
        check_case(target, case)
    silent_connection(target, header_timeout)
    uploads(target)
    after = stored(target)
    if after != before:
        target.failures.append(f"{after - before} submissions were stored by refused requests")
    print(f"hostile: {target.sent} requests, {target.server_errors} 5xx, "
          f"{target.non_json_errors} errors not JSON, {after - before} stored", flush=True)
    if target.failures or target.server_errors or target.non_json_errors:
        raise HostileFailed("; ".join(target.failures) or "5xx or non-JSON errors")


# --- Slow clients -----------------------------------------------------------------------------


class SlowClients:
    """``count`` connections that each send one byte a second of an endless head or body, or
    nothing at all; a connection the server closes is opened again at once."""

    KINDS = ("head", "body", "silent")

    def __init__(self, target: Target, slug: str, count: int) -> None:
        self.target, self.count = target, count
        self.head = f"POST /api/v1/f/{slug} HTTP/1.1\r\nHost: localhost\r\nX-Slow: ".encode()
        self.body_head = request("POST", f"/api/v1/f/{slug}", b"",
                                 {"Content-Type": "application/json"}, length=100_000)
        self.selector = selectors.DefaultSelector()
        self.stopping = threading.Event()
        self.opened = 0

    def open(self, kind: str) -> None:
        conn = socket.socket()
        conn.setblocking(False)
        conn.connect_ex((self.target.host, self.target.port))
        self.selector.register(conn, selectors.EVENT_READ, [kind, 0])
        self.opened += 1

    def run(self) -> None:
        for number in range(self.count):
            self.open(self.KINDS[number % 3])
        while not self.stopping.is_set():
            started = time.monotonic()
            for key in list(self.selector.get_map().values()):
                self.tick(key.fileobj, key.data)
            for key, _ in self.selector.select(timeout=0):
                self.drain(key.fileobj, key.data)
            self.stopping.wait(max(0.0, 1 - (time.monotonic() - started)))
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()

    def tick(self, conn: socket.socket, state: list) -> None:
        kind, sent = state
        if kind == "silent":
            return
        data = (self.head if kind == "head" else self.body_head) if sent == 0 else b"a"
        try:
            state[1] += conn.send(data if sent == 0 else b"a")
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self.reopen(conn, kind)

    def drain(self, conn: socket.socket, state: list) -> None:
        try:
            data = conn.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data or data.startswith(b"HTTP/"):
            self.reopen(conn, state[0])

    def reopen(self, conn: socket.socket, kind: str) -> None:
        self.selector.unregister(conn)
        conn.close()
        self.open(kind)


def slow_clients(base: str, token: str, form_id: str, seconds: float = 30,
                 count: int = 200) -> None:
    parts = urllib.parse.urlsplit(base)
    target = Target(parts.hostname or "127.0.0.1", parts.port or 80, token, form_id)
    prepare(target)
    # The probe comes from the same address every second: lift the form's per-address limit.
    status, _ = api(target, "PATCH", f"/api/v1/forms/{form_id}", {"rateLimit": 10000})
    if status != 200:
        raise HostileFailed(f"raising the form's rate limit answered {status}")
    before = stored(target)
    slow = SlowClients(target, target.slug, count)
    thread = threading.Thread(target=slow.run, daemon=True)
    thread.start()
    time.sleep(2)  # let every slow connection be open before the first probe
    timings, failures = [], []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.monotonic()
        body = json.dumps({"probe": str(random.random())}).encode()
        try:
            answer = target.exchange(request("POST", f"/api/v1/f/{target.slug}", body,
                                             {"Content-Type": "application/json"}), timeout=5)
            if answer.status != 200:
                failures.append(f"probe answered {answer.status}")
        except OSError as error:
            failures.append(f"probe failed: {error}")
        took = time.monotonic() - started
        timings.append((took, len(timings)))
        time.sleep(max(0.0, 1 - took))
    slow.stopping.set()
    thread.join(10)
    slowest = sorted(timings, reverse=True)[:3]
    durations = sorted(took for took, _ in timings)
    p99 = durations[min(len(durations) - 1, int(len(durations) * 0.99))]
    probes_stored = stored(target) - before
    print(f"slow clients: {count} held open ({slow.opened} opened in all), {len(timings)} probes, "
          f"{len(failures)} failed, p50 {durations[len(durations) // 2] * 1000:.0f} ms, "
          f"p99 {p99 * 1000:.0f} ms; slowest (ms, probe number): "
          f"{[(round(took * 1000), number) for took, number in slowest]}; "
          f"{probes_stored} stored", flush=True)
    if failures or p99 >= 1 or probes_stored != len(timings):
        raise HostileFailed(f"slow clients: {failures[:3]}, p99 {p99:.2f}s, "
                            f"{probes_stored} of {len(timings)} probes stored")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--token", required=True, help="an access token of the form's owner")
    parser.add_argument("--form-id", required=True)
    parser.add_argument("--header-timeout", type=float, default=10,
                        help="the server's SERVER_HEADER_TIMEOUT")
    parser.add_argument("--slow", action="store_true", help="also run the slow-client test")
    args = parser.parse_args(argv)
    try:
        run(args.base_url, args.token, args.form_id, args.header_timeout)
        if args.slow:
            slow_clients(args.base_url, args.token, args.form_id)
    except HostileFailed as error:
        print(f"hostile: FAILED: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
