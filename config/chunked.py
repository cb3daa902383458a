"""Chunked request bodies reach Django with a length.

A client that streams its body (``Transfer-Encoding: chunked``: a ``fetch()`` with a stream,
many server-side HTTP libraries) sends no ``Content-Length``. gunicorn passes the body on,
de-chunked, but WSGI has no length for it, and Django reads a request without
``CONTENT_LENGTH`` as empty: a submission answered "no fields". This wrapper reads such a
body up to one byte past the largest body any view accepts, and hands Django that many
bytes with their length, so an oversized one is refused as ``413`` by the view's own check.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any


class ChunkedBodies:
    def __init__(self, app: Callable, limit: int) -> None:
        self.app = app
        self.limit = limit

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and not environ.get("CONTENT_LENGTH"):
            body = _read(environ["wsgi.input"], self.limit + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.app(environ, start_response)


def _read(stream, most: int) -> bytes:
    """Up to ``most`` bytes; a read may return fewer than asked before the end."""
    parts, total = [], 0
    while total < most:
        part = stream.read(min(64 * 1024, most - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
    return b"".join(parts)
