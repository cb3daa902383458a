"""The limits a public service needs at its edge, in front of uvicorn's own HTTP protocol.

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

``EdgeProtocol`` is each connection's asyncio protocol (uvicorn's ``http`` setting takes a
protocol class). It reads every chunk first, with httptools' request parser (in C) used only to
find where a request's head and body end and to count the head's fields and bytes, and keeps
the deadlines with the loop's timers. Then it passes the same chunk, unchanged, to uvicorn's
httptools protocol, which it drives through asyncio's ``Protocol`` interface alone; that
protocol writes through a ``Relay`` (edge/relay.py), so the edge sees the answers go out. To
refuse, the edge takes the connection over: uvicorn's protocol is told its connection is lost
(an app that began the request reads a disconnect), and the edge writes the answer itself.

The one name taken from inside uvicorn is its httptools protocol class (documented only as the
setting's value ``"httptools"``): it is built with the arguments uvicorn's server gave this
class, passed on unread, and used through asyncio's ``Protocol`` methods only.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any, cast

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from edge import access_log
from edge.refusals import (
    Refusal,
    bad_request,
    busy,
    headers_too_large,
    incomplete_body,
    response,
    timeout,
    uri_too_long,
)
from edge.relay import Answers, Relay

MAX_TARGET_BYTES = 16 * 1024
MAX_HEAD_BYTES = 64 * 1024
MAX_HEADER_FIELDS = 100
RETRY_AFTER_SECONDS = 5
LINGER_SECONDS = 2

# Open connections per event loop: one loop per process under gunicorn (and per test server).
OPEN: dict[asyncio.AbstractEventLoop, int] = {}


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


class NoUpgradeWarnings(logging.Filter):
    """uvicorn warns twice of each request that asks to upgrade the connection (the worker
    turns WebSockets off), so any client could fill the error log; the request is answered as
    plain HTTP, which needs no warning."""

    QUIET = ("Unsupported upgrade request", "No supported WebSocket library")

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith(self.QUIET))


def quiet_upgrades() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, NoUpgradeWarnings) for f in logger.filters):
        logger.addFilter(NoUpgradeWarnings())


class EdgeProtocol(asyncio.Protocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.uvicorn = args, kwargs  # what uvicorn's server gives its protocol, passed on unread
        access_log.install()  # before this connection's first request is logged
        quiet_upgrades()
        self.limits = limits()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.transport: asyncio.Transport | None = None
        self.inner: asyncio.Protocol | None = None  # uvicorn's protocol, until taken over
        self.relay: Relay | None = None
        self.answers = Answers(self.answered)
        self.parser = httptools.HttpRequestParser(self)
        # As uvicorn's parser: what follows a request with Connection: close is ignored.
        self.parser.set_dangerous_leniencies(lenient_data_after_close=True)
        self.deadline: asyncio.TimerHandle | None = None
        self.timing_body = False  # the deadline armed is the body's
        self.reading = False  # a request has begun and is not whole yet
        self.in_body = False
        self.began = self.ended = False  # a request began, or ended, in the chunk being read
        self.head_seen = 0  # bytes received while the head is incomplete
        self.head_bytes = 0  # header names and values parsed
        self.target_bytes = 0
        self.fields = 0
        self.whole = 0  # requests received whole, and passed on
        self.request_started = 0.0  # when the latest request's first byte came (monotonic)
        self.closing = False  # reading has stopped: close once every answer is written
        self.lingering = False

    # asyncio's Protocol interface
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport = cast(asyncio.Transport, transport)
        self.loop = loop = asyncio.get_running_loop()
        OPEN[loop] = OPEN.get(loop, 0) + 1
        if OPEN[loop] > self.limits.connections:
            retry = (b"retry-after", str(RETRY_AFTER_SECONDS).encode())
            self.answer(busy(), headers=(retry,))
            return
        self.relay = Relay(transport, self.answers)
        args, kwargs = self.uvicorn
        self.inner = HttpToolsProtocol(*args, **kwargs)
        self.inner.connection_made(self.relay)
        self.arm(self.limits.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self.disarm()
        if self.loop is not None:
            left = OPEN.pop(self.loop) - 1
            if left:
                OPEN[self.loop] = left
        if self.inner is not None:
            inner, self.inner = self.inner, None
            inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.lingering or self.closing:
            return  # reading has stopped, though a chunk may already be on its way
        try:
            self.parser.feed_data(data)
            if self.reading and not self.in_body:
                self.head_seen += len(data)
                if self.head_seen > MAX_HEAD_BYTES:
                    raise headers_too_large()
        except Refusal as refusal:
            return self.refuse(refusal)
        except httptools.HttpParserUpgrade:
            pass  # no protocol to upgrade to: the request is answered as plain HTTP
        except httptools.HttpParserCallbackError as error:
            cause = error.__context__
            return self.refuse(cause if isinstance(cause, Refusal) else bad_request())
        except httptools.HttpParserError:
            return self.refuse(bad_request())
        self.keep_time()
        if self.inner is not None:
            # Copied by the task uvicorn makes for a request whose head this chunk completes.
            access_log.STARTED.set(self.request_started)
            self.inner.data_received(data)

    # asyncio's Protocol.eof_received may return True (keep the socket half open).
    def eof_received(self) -> bool | None:
        if self.lingering:
            return None
        if self.closing:
            return True  # the answers being made are still sent
        if self.in_body:
            self.refuse(incomplete_body())
            return None
        if self.reading:
            self.refuse(bad_request())
            return None
        if self.inner is not None:
            self.inner.eof_received()
        if self.pending():
            # The client sent whole requests and closed its side: answer them, then close.
            self.close_when_answered()
            return True
        return None

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    # Parser callbacks: httptools calls only these, and none for the body's bytes.
    def on_message_begin(self) -> None:
        self.reading, self.in_body, self.began = True, False, True
        self.request_started = time.monotonic()
        self.head_seen = self.head_bytes = self.target_bytes = self.fields = 0

    def on_url(self, url: bytes) -> None:
        self.target_bytes += len(url)
        if self.target_bytes > MAX_TARGET_BYTES:
            raise uri_too_long()

    def on_header(self, name: bytes, value: bytes) -> None:
        self.head_bytes += len(name) + len(value)
        self.fields += 1
        if self.head_bytes > MAX_HEAD_BYTES:
            raise headers_too_large()
        if self.fields > MAX_HEADER_FIELDS:
            raise headers_too_large("The request has too many header fields.")

    def on_headers_complete(self) -> None:
        self.in_body = True
        if self.parser.get_method() == b"HEAD":
            self.answers.expect_head(self.whole + 1)

    def on_message_complete(self) -> None:
        self.reading = self.in_body = False
        self.ended = True
        self.whole += 1

    # Deadlines
    def keep_time(self) -> None:
        """Once a chunk is read: a deadline for the head from the request's first byte, for the
        body from the head's end, none once it is whole (uvicorn's keep-alive timeout runs
        between requests). A request whole in one chunk arms no timer."""
        if self.reading:
            if self.began or self.in_body != self.timing_body:
                self.timing_body = self.in_body
                self.arm(self.limits.body_timeout if self.in_body
                         else self.limits.header_timeout)
        elif self.ended:
            self.disarm()
        self.began = self.ended = False

    def arm(self, seconds: float) -> None:
        assert self.loop is not None
        self.disarm()
        self.deadline = self.loop.call_later(seconds, self.expired)

    def disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def expired(self) -> None:
        self.deadline = None
        if self.pending():
            # A pipelined request is late while answers are being made: finish them, then
            # close instead of reading on.
            self.close_when_answered()
            return
        self.refuse(timeout())

    # Answers
    def pending(self) -> bool:
        """Some request received whole is not answered yet."""
        return self.answers.done < self.whole and not self.answers.lost

    def answered(self) -> None:
        if self.closing and not self.pending() and self.transport is not None:
            self.transport.close()

    def close_when_answered(self) -> None:
        self.closing = True
        self.disarm()
        if self.relay is not None:
            self.relay.hold()

    def refuse(self, refusal: Refusal) -> None:
        """Take the connection over from uvicorn's protocol, answer ``refusal`` and close; an
        app that began a request reads a disconnect."""
        self.disarm()
        self.reading = self.in_body = False
        cut_short = self.answers.started or self.answers.lost
        if self.relay is not None:
            self.relay.cut()
        if self.inner is not None:
            inner, self.inner = self.inner, None
            inner.connection_lost(None)
        if cut_short:
            self.lingering = True
            assert self.transport is not None
            self.transport.close()  # too late for an error: cut the answer off
            return
        self.answer(refusal)

    def answer(self, refusal: Refusal, headers: tuple = ()) -> None:
        self.lingering = True
        assert self.transport is not None
        if not self.transport.is_closing():
            self.transport.write(response(refusal, headers))
            self.linger()

    def linger(self) -> None:
        """Close after the client has had time to read the answer. Closing a socket that holds
        unread bytes from the client makes the kernel send a reset, which can destroy the
        answer before the client reads it; so, like nginx's lingering close, the server says
        no more, then reads and drops what still comes for a moment."""
        assert self.transport is not None and self.loop is not None
        if not self.transport.is_reading():
            self.transport.resume_reading()
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.deadline = self.loop.call_later(LINGER_SECONDS, self.transport.close)
