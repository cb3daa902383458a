"""Django's WSGI app served from uvicorn's event loop.

The body is read whole on the loop (into memory, or a temporary file past 256 KiB), so a client
that sends slowly holds no thread; only then does a thread of the pool run Django. A thread
keeps its database connection from request to request, as under any threaded WSGI server.

uvicorn's own WSGI adapter buffers the answer instead, without limit, and a2wsgi reads the body
from the app's thread; neither fits. An answer in one piece is sent from the loop. A streamed
one (an export) is sent by the thread that makes it, since its database cursor belongs to that
thread; each send waits until the client has taken the bytes before the next is made, so a
slow reader never fills memory, and a client that leaves stops the export.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import unquote_to_bytes

from edge import bodies

logger = logging.getLogger(__name__)

SPOOL_BYTES = 256 * 1024
STREAM_CHUNK_BYTES = 64 * 1024

SERVER_ERROR = json.dumps(
    {"error": "server_error", "message": "Something went wrong on our side. Please try again."}
).encode()


class WsgiBridge:
    def __init__(self, app: Callable, body_limit: int, threads: int = 8,
                 upload_limit: int | None = None) -> None:
        self.app = app
        self.body_limit = body_limit  # one byte more is read, so the app can refuse it as 413
        # A multipart post to a public form may carry files (edge/bodies.py).
        self.upload_limit = body_limit if upload_limit is None else upload_limit
        self.threads = threads  # the gunicorn worker sets it from --threads before serving
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None

    @property
    def executor(self) -> concurrent.futures.ThreadPoolExecutor:
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(
                self.threads, thread_name_prefix="django"
            )
        return self._executor

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return  # no lifespan or WebSocket support: uvicorn is told to use neither
        body = await read_body(receive, self.limit_for(scope) + 1)
        if body is None:
            return  # the client left, or the server refused the request at its edge
        loop = asyncio.get_running_loop()
        call = Call(self.app, environ(scope, body), loop, receive, send)
        call.close_after = body.truncated  # the rest of the body is unread
        try:
            answer = await loop.run_in_executor(self.executor, call.run)
        except Exception:
            logger.exception("The WSGI app failed outside Django's own error handling")
            answer = (500, [(b"content-type", b"application/json")], SERVER_ERROR)
            if call.started:
                raise  # uvicorn closes the connection mid-answer
        if answer is not None:
            status, headers, content = answer
            if not any(name == b"content-length" for name, _ in headers):
                headers.append((b"content-length", str(len(content)).encode()))
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": content})


    def limit_for(self, scope: dict) -> int:
        content_type = next((value.decode("latin-1") for name, value in scope["headers"]
                             if name.lower() == b"content-type"), "")
        return bodies.limit_for(scope["method"], scope.get("path", ""), content_type,
                                self.body_limit, self.upload_limit)


class Body(tempfile.SpooledTemporaryFile):
    truncated = False  # more was sent than was read


async def read_body(receive: Callable, most: int) -> Body | None:
    body = Body(max_size=SPOOL_BYTES)
    size, more = 0, True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            body.close()
            return None
        chunk = message.get("body", b"")
        more = message.get("more_body", False)
        if size + len(chunk) >= most:
            body.write(chunk[: most - size])
            body.truncated = more or size + len(chunk) > most
            break
        body.write(chunk)
        size += len(chunk)
    body.seek(0)
    return body


def environ(scope: dict, body: Body) -> dict[str, Any]:
    """The WSGI environ gunicorn would build, with the length of the body as read."""
    server = scope.get("server") or ("localhost", 80)
    client = scope.get("client") or ("", 0)
    body.seek(0, 2)
    length = body.tell()
    body.seek(0)
    env: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote_to_bytes(scope["raw_path"]).decode("latin-1"),
        "QUERY_STRING": scope["query_string"].decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": f"HTTP/{scope['http_version']}",
        "REMOTE_ADDR": client[0],
        "REMOTE_PORT": str(client[1]),
        "CONTENT_LENGTH": str(length),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": body,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    for raw_name, raw_value in scope["headers"]:
        name = raw_name.decode("latin-1").upper()
        if "_" in name or name in ("CONTENT-LENGTH", "TRANSFER-ENCODING"):
            # An underscore could pass a header off as another once dashes become
            # underscores (gunicorn drops these too); the body is already de-chunked.
            continue
        key = "CONTENT_TYPE" if name == "CONTENT-TYPE" else "HTTP_" + name.replace("-", "_")
        value = raw_value.decode("latin-1")
        env[key] = f"{env[key]},{value}" if key in env else value
    return env


class Call:
    """One request run by a pool thread. ``run`` returns ``(status, headers, body)`` for an
    answer in one piece, or None once it has streamed the answer itself."""

    def __init__(self, app: Callable, env: dict, loop, receive: Callable, send: Callable) -> None:
        self.app, self.env, self.loop = app, env, loop
        self.body = env["wsgi.input"]  # the app may wrap it in the environ
        self.receive, self.send = receive, send
        self.status = 500
        self.headers: list[tuple[bytes, bytes]] = []
        self.started = False
        self.close_after = False
        self.gone = threading.Event()

    def start_response(self, status: str, headers: list, exc_info=None) -> Callable:
        self.status = int(status.split(" ", 1)[0])
        self.headers = [(name.lower().encode("latin-1"), value.encode("latin-1"))
                        for name, value in headers]
        if self.close_after:
            self.headers.append((b"connection", b"close"))
        return self.write_unsupported

    def write_unsupported(self, data: bytes) -> None:
        raise NotImplementedError("the WSGI write() callable is not supported")

    def run(self) -> tuple[int, list, bytes] | None:
        result = self.app(self.env, self.start_response)
        try:
            chunks = iter(result)
            first = next(chunks, b"")
            second = next(chunks, None)
            if second is None:
                return self.status, self.headers, first
            self.stream(first, second, chunks)
            return None
        finally:
            if hasattr(result, "close"):
                result.close()  # Django's request_finished: the connection is tidied here
            self.body.close()

    def stream(self, first: bytes, second: bytes, rest: Iterable[bytes]) -> None:
        self.started = True
        asyncio.run_coroutine_threadsafe(self.watch(), self.loop)
        self.push({"type": "http.response.start", "status": self.status, "headers": self.headers})
        pending, size = [first, second], len(first) + len(second)
        for chunk in rest:
            if self.gone.is_set():
                return  # the client left: stop making the export
            pending.append(chunk)
            size += len(chunk)
            if size >= STREAM_CHUNK_BYTES:
                self.push({"type": "http.response.body", "body": b"".join(pending),
                           "more_body": True})
                pending, size = [], 0
        self.push({"type": "http.response.body", "body": b"".join(pending)})

    def push(self, message: dict) -> None:
        # Waits until uvicorn has written the bytes, and the transport's buffer has room.
        asyncio.run_coroutine_threadsafe(self.send(message), self.loop).result()

    async def watch(self) -> None:
        # receive() answers a disconnect once the client leaves or the answer is complete.
        await self.receive()
        self.gone.set()
