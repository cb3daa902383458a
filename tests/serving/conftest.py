"""A real web server in this process: uvicorn's loop with ``EdgeProtocol`` and the WSGI bridge,
as the production worker class configures them, on a socket of its own. Tests talk to it with
raw sockets, so nothing between them and the server fixes up what they send."""

from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import wait
from dataclasses import dataclass

import pytest
import uvicorn
from django.conf import settings
from django.db import connections

from edge.bridge import WsgiBridge
from edge.worker import Worker


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        import json

        return json.loads(self.body)


class EdgeServer:
    def __init__(self, threads: int, access_log: bool = False, loop: str = "asyncio") -> None:
        from config.wsgi import application
        from core.infra import dbtimeouts
        from files.receiving import LARGEST_BODY

        # Bound as a web process's sessions are, for this server's life only: config.wsgi
        # binds them once, at its first import, and they would stay bound for every test
        # after this one, which then ran under other bounds than when run alone.
        dbtimeouts.bound_web_sessions()

        self.bridge = WsgiBridge(application, settings.DATA_UPLOAD_MAX_MEMORY_SIZE, threads,
                                 upload_limit=LARGEST_BODY)
        config = uvicorn.Config(self.bridge, **{**Worker.CONFIG_KWARGS, "loop": loop},
                                timeout_keep_alive=2, access_log=access_log,
                                log_level="info" if access_log else "warning",
                                log_config=None)
        self.server = uvicorn.Server(config)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.address = self.sock.getsockname()
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       daemon=True)

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()
        self._close_thread_connections()
        from core.infra import dbtimeouts

        dbtimeouts.unbind_sessions()

    def _close_thread_connections(self) -> None:
        # Each pool thread keeps a database connection, which would keep the test database
        # from being dropped: every thread closes its own.
        threads = self.bridge.threads
        barrier = threading.Barrier(threads)

        def close() -> None:
            barrier.wait(10)
            connections.close_all()

        wait([self.bridge.executor.submit(close) for _ in range(threads)])
        self.bridge.executor.shutdown()

    def connect(self, timeout: float = 10) -> socket.socket:
        return socket.create_connection(self.address, timeout=timeout)

    def exchange(self, data: bytes, *, half_close: bool = False, timeout: float = 10) -> Answer:
        """Send ``data`` on a new connection and read until the server closes it."""
        with self.connect(timeout) as conn:
            conn.sendall(data)
            if half_close:
                conn.shutdown(socket.SHUT_WR)
            return read_answer(conn)


def read_all(conn: socket.socket) -> bytes:
    parts = []
    while chunk := conn.recv(65536):
        parts.append(chunk)
    return b"".join(parts)


def parse(raw: bytes) -> Answer:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = dechunk(body)
    return Answer(int(lines[0].split()[1]), headers, body)


def read_answer(conn: socket.socket) -> Answer:
    return parse(read_all(conn))


def dechunk(data: bytes) -> bytes:
    out = []
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return b"".join(out)
        out.append(data[:size])
        data = data[size + 2:]


def request(method: str, path: str, body: bytes = b"", headers: dict | None = None,
            length: int | None = None) -> bytes:
    """A request with ``Connection: close``; ``length`` declares a Content-Length other than
    the body's."""
    fields = {"Host": "localhost", "Connection": "close", **(headers or {})}
    if body or length is not None:
        fields.setdefault("Content-Length", str(len(body) if length is None else length))
    head = "".join(f"{name}: {value}\r\n" for name, value in fields.items())
    return f"{method} {path} HTTP/1.1\r\n{head}\r\n".encode() + body


@pytest.fixture
def edge(transactional_db, settings):
    settings.SERVER_HEADER_TIMEOUT = 1
    settings.SERVER_BODY_TIMEOUT = 2
    server = EdgeServer(threads=2)
    server.start()
    yield server
    server.stop()
