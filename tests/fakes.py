"""Real HTTP servers on loopback that stand in for external services in tests."""

from __future__ import annotations

import contextlib
import json
import socketserver
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from requests.structures import CaseInsensitiveDict


@dataclass
class Recorded:
    method: str
    path: str
    headers: CaseInsensitiveDict
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: Any = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    body_delay: float = 0.0  # seconds between the headers and the body, for slow receivers


class FakeServer:
    """Records every request and answers with ``handler(recorded) -> Reply``."""

    def __init__(self, handler: Callable[[Recorded], Reply] | None = None) -> None:
        self.requests: list[Recorded] = []
        self.handler = handler or (lambda _request: Reply())
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                headers = CaseInsensitiveDict(dict(self.headers.items()))
                recorded = Recorded(self.command, self.path, headers, self.rfile.read(length))
                fake.requests.append(recorded)
                reply = fake.handler(recorded)
                payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body)
                payload = payload.encode() if isinstance(payload, str) else payload
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if reply.body_delay:
                    self.wfile.flush()
                    time.sleep(reply.body_delay)
                # The client may stop reading, as a timed-out or capped read does.
                with contextlib.suppress(ConnectionError):
                    self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


class Trickle(socketserver.ThreadingTCPServer):
    """Reads a request, then answers "200 OK" one byte every 1.5 s: no recv ever waits long
    enough for a per-read timeout to trip."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        self.served = 0

        class Handler(socketserver.BaseRequestHandler):
            def handle(handler) -> None:
                handler.request.recv(65536)
                self.served += 1
                try:
                    for byte in answer:
                        handler.request.sendall(bytes([byte]))
                        time.sleep(1.5)
                except OSError:
                    pass  # the client gave up, as it must

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hook"


class SlowRelay(socketserver.ThreadingTCPServer):
    """A mail relay that sends part of its conversation one byte every 1.5 s, so no recv ever
    waits long enough for a per-read timeout (EMAIL_TIMEOUT) to trip:

    - ``"data"``: it takes the message whole (``messages`` counts it), then trickles its
      "250" reply, as a relay slow to queue does;
    - ``"greeting"``: it trickles its first line;
    - ``"tls"``: it trickles the start of a TLS handshake (a port-465 relay).
    """

    daemon_threads = True
    allow_reuse_address = True
    # Two lines: a client that has the first line's "250" must still wait for the last.
    REPLY = b"250-2.0.0 OK: queued as 0123456789ABCDEF0123456789\r\n250 2.0.0 Bye for now\r\n"

    def __init__(self, trickle: str = "data") -> None:
        self.messages = 0
        self.trickle = trickle
        relay = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(handler) -> None:
                with contextlib.suppress(OSError):  # the client gave up, as it must
                    relay._converse(handler.request, handler.rfile)

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()

    @property
    def port(self) -> int:
        return self.server_address[1]

    @staticmethod
    def _drip(sock, data: bytes) -> None:
        for byte in data:
            sock.sendall(bytes([byte]))
            time.sleep(1.5)

    def _converse(self, sock, rfile) -> None:
        if self.trickle == "tls":
            sock.recv(65536)  # the client's hello; a handshake record 16 KB long, never whole
            self._drip(sock, b"\x16\x03\x03\x40\x00" + b"\x02" * 64)
            return
        greeting = b"220 relay.example ESMTP\r\n"
        self._drip(sock, greeting) if self.trickle == "greeting" else sock.sendall(greeting)
        while line := rfile.readline():
            verb = line[:4].upper()
            if verb == b"QUIT":
                sock.sendall(b"221 bye\r\n")
                return
            if verb != b"DATA":
                sock.sendall(b"250 relay.example\r\n" if verb in (b"EHLO", b"HELO")
                             else b"250 OK\r\n")
                continue
            sock.sendall(b"354 go on\r\n")
            while (body := rfile.readline()) and body != b".\r\n":
                pass
            self.messages += 1
            self._drip(sock, self.REPLY) if self.trickle == "data" else sock.sendall(b"250 OK\r\n")

    def close(self) -> None:
        self.shutdown()
        self.server_close()
