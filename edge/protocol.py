"""uvicorn's HTTP protocol, with the limits a public service needs at its edge.

uvicorn times out only a kept-alive connection between requests. A client that connects and
stays silent, or sends its headers or body a byte at a time, is never cut off, and llhttp
accepts headers of any size. This protocol adds:

- a deadline for the request line and headers, from the connection's start and then from each
  request's first byte (``SERVER_HEADER_TIMEOUT``), and one for the body once the headers are in
  (``SERVER_BODY_TIMEOUT``): the client gets ``408`` and the connection closes;
- ``414`` for a request target over 16 KiB and ``431`` for a head over 64 KiB or 100 header
  fields;
- ``503`` past ``SERVER_MAX_CONNECTIONS`` open connections in the process;
- a body that ends (the client half-closed) before its ``Content-Length`` is ``400``
  ``incomplete_body``, and the app never sees the request; a client that half-closes after a
  whole request still gets its answer;
- every error the server writes itself is JSON in the API's shape, never text or HTML.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import httptools
from uvicorn.protocols.http.httptools_impl import (
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
)

from edge import access_log

MAX_TARGET_BYTES = 16 * 1024
MAX_HEAD_BYTES = 64 * 1024
MAX_HEADER_FIELDS = 100
RETRY_AFTER_SECONDS = 5
LINGER_SECONDS = 2


@dataclass(frozen=True)
class Limits:
    header_timeout: float
    body_timeout: float
    connections: int


def limits() -> Limits:
    # Read for each connection (three attribute reads), after the app has loaded the settings.
    from django.conf import settings

    return Limits(
        header_timeout=settings.SERVER_HEADER_TIMEOUT,
        body_timeout=settings.SERVER_BODY_TIMEOUT,
        connections=settings.SERVER_MAX_CONNECTIONS,
    )


class Refusal(Exception):
    """An answer the server gives without the app: raised from the parser's callbacks."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def bad_request() -> Refusal:
    return Refusal(400, "bad_request", "The request is not valid HTTP.")


def error_response(status: int, code: str, message: str, headers: tuple = ()) -> bytes:
    body = json.dumps({"error": code, "message": message}).encode()
    head = [STATUS_LINE[status]]
    fields = (
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *headers,
    )
    head.extend(name + b": " + value + b"\r\n" for name, value in fields)
    return b"".join(head) + b"\r\n" + body


class EdgeProtocol(HttpToolsProtocol):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        access_log.install()  # before this connection's first request is logged
        self.limits = limits()
        self.deadline: asyncio.TimerHandle | None = None
        self.reading = False  # a request has begun and is not whole yet
        self.in_body = False
        self.head_seen = 0  # bytes received while the head is incomplete
        self.head_bytes = 0  # header names and values parsed
        # The cycle whose request is whole, while the app answers it.
        self.answering: RequestResponseCycle | None = None
        self.lingering = False

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        if len(self.connections) > self.limits.connections:
            retry = (b"retry-after", str(RETRY_AFTER_SECONDS).encode())
            self.refuse(Refusal(503, "service_unavailable", "The server is busy. Please try "
                                "again shortly."), headers=(retry,))
            return
        self.arm(self.limits.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self.disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.lingering:
            return
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
            if self.reading and not self.in_body:
                self.head_seen += len(data)
                if self.head_seen > MAX_HEAD_BYTES:
                    raise Refusal(431, "headers_too_large", "The request headers are too large.")
        except Refusal as refusal:
            self.refuse(refusal)
        except httptools.HttpParserUpgrade:
            pass  # no protocol to upgrade to: the request is answered as plain HTTP
        except httptools.HttpParserCallbackError as error:
            cause = error.__context__
            self.refuse(cause if isinstance(cause, Refusal) else bad_request())
        except httptools.HttpParserError:
            self.refuse(bad_request())

    # asyncio's Protocol.eof_received may return True (keep the socket half open); uvicorn's
    # annotation says it returns nothing.
    def eof_received(self) -> bool | None:  # type: ignore[override]
        if self.lingering:
            return None
        if self.in_body:
            self.refuse(Refusal(400, "incomplete_body",
                                "The request body ended before its Content-Length."))
        elif self.reading:
            self.refuse(bad_request())
        elif self.answering is not None and not self.answering.response_complete:
            # The client sent a whole request and closed its side: answer it, then close.
            self.answering.keep_alive = False
            return True
        return None

    # Parser callbacks
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.reading, self.in_body = True, False
        self.head_seen = self.head_bytes = 0
        self.arm(self.limits.header_timeout)

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > MAX_TARGET_BYTES:
            raise Refusal(414, "uri_too_long", "The request URL is too long.")

    def on_header(self, name: bytes, value: bytes) -> None:
        super().on_header(name, value)
        self.head_bytes += len(name) + len(value)
        if self.head_bytes > MAX_HEAD_BYTES:
            raise Refusal(431, "headers_too_large", "The request headers are too large.")
        if len(self.headers) > MAX_HEADER_FIELDS:
            raise Refusal(431, "headers_too_large", "The request has too many header fields.")

    def on_headers_complete(self) -> None:
        self.in_body = True
        self.arm(self.limits.body_timeout)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.reading = self.in_body = False
        self.answering = self.cycle
        self.disarm()

    # Deadlines
    def arm(self, seconds: float) -> None:
        self.disarm()
        self.deadline = self.loop.call_later(seconds, self.expired)

    def disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def expired(self) -> None:
        self.deadline = None
        answering = self.answering
        if answering is not None and not answering.response_complete:
            # A pipelined request is late while an answer is being made: finish that answer,
            # then close instead of reading on.
            answering.keep_alive = False
            self.pipeline.clear()
            self.flow.pause_reading()
            return
        self.refuse(Refusal(408, "request_timeout", "The request was not received in time."))

    def refuse(self, refusal: Refusal, headers: tuple = ()) -> None:
        """Answer ``refusal`` and close; the app, if it began the request, reads a disconnect."""
        self.disarm()
        self.reading = self.in_body = False
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            if cycle.response_started:
                self.transport.close()  # too late for an error: cut the answer off
                return
            cycle.disconnected = True
            cycle.message_event.set()
        if not self.transport.is_closing():
            answer = error_response(refusal.status, refusal.code, refusal.message, headers)
            self.transport.write(answer)
            self.linger()

    def linger(self) -> None:
        """Close after the client has had time to read the answer. Closing a socket that holds
        unread bytes from the client makes the kernel send a reset, which can destroy the
        answer before the client reads it; so, like nginx's lingering close, the server says
        no more, then reads and drops what still comes for a moment."""
        self.lingering = True
        self.parser = None  # type: ignore[assignment]  # nothing more is parsed
        self.flow.resume_reading()
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.deadline = self.loop.call_later(LINGER_SECONDS, self.transport.close)
