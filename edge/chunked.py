"""Request bodies reach Django whole, and with a length.

A client that streams its body (``Transfer-Encoding: chunked``: a ``fetch()`` with a stream,
many server-side HTTP libraries) sends no ``Content-Length``. gunicorn passes the body on,
de-chunked, but WSGI has no length for it, and Django reads a request without
``CONTENT_LENGTH`` as empty: a submission answered "no fields". This wrapper reads such a
body up to one byte past the largest body any view accepts, and hands Django that many
bytes with their length, so an oversized one is refused as ``413`` by the view's own check.

A body with a ``Content-Length`` that ends early (the client half-closed) is an error when
read, never a shorter body.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from typing import Any

from edge import bodies

SPOOL_BYTES = 256 * 1024


class IncompleteBody(OSError):
    """The client stopped sending before the end its Content-Length announced. An OSError, so
    Django reports it as UnreadablePostError wherever the body is read."""


class WholeBody:
    """``wsgi.input`` that refuses to pass a short body off as whole: gunicorn hands a view
    whatever arrived before the client half-closed, and a cut-off submission was stored."""

    def __init__(self, stream, length: int) -> None:
        self.stream, self.left = stream, length

    def read(self, size: int = -1) -> bytes:
        # A WSGI input's read(n) blocks until n bytes or the end: fewer means the end came.
        want = self.left if size is None or size < 0 else min(size, self.left)
        data = self.stream.read(want) if want else b""
        return self._took(data, len(data) < want)

    def readline(self, size: int = -1) -> bytes:
        want = self.left if size is None or size < 0 else min(size, self.left)
        data = self.stream.readline(want) if want else b""
        return self._took(data, len(data) < want and not data.endswith(b"\n"))

    def _took(self, data: bytes, ended: bool) -> bytes:
        self.left -= len(data)
        if ended:
            raise IncompleteBody(f"the body ended {self.left} bytes early")
        return data


class ChunkedBodies:
    def __init__(self, app: Callable, limit: int, upload_limit: int | None = None) -> None:
        self.app = app
        self.limit = limit
        # A multipart post to a public form may carry files (edge/bodies.py).
        self.upload_limit = limit if upload_limit is None else upload_limit

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and not environ.get("CONTENT_LENGTH"):
            limit = bodies.limit_for(environ.get("REQUEST_METHOD", ""),
                                     environ.get("PATH_INFO", ""),
                                     environ.get("CONTENT_TYPE", ""), self.limit,
                                     self.upload_limit)
            body, length = _read(environ["wsgi.input"], limit + 1)
            environ["wsgi.input"] = body
            environ["CONTENT_LENGTH"] = str(length)
        elif environ.get("CONTENT_LENGTH", "").isdigit():
            environ["wsgi.input"] = WholeBody(environ["wsgi.input"], int(environ["CONTENT_LENGTH"]))
        return self.app(environ, start_response)


def _read(stream, most: int) -> tuple[Any, int]:
    """Up to ``most`` bytes, in memory up to 256 KiB and then in a temporary file, and their
    count; a read may return fewer than asked before the end."""
    body, total = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES), 0  # noqa: SIM115  # the request closes it
    while total < most:
        part = stream.read(min(64 * 1024, most - total))
        if not part:
            break
        body.write(part)
        total += len(part)
    body.seek(0)
    return body, total
