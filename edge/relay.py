"""What passes between the edge and uvicorn's protocol behind it.

uvicorn's protocol gets a ``Relay`` as its transport: the socket's own, through asyncio's public
``Transport`` interface, with the edge watching what goes out. ``Answers`` reads the answers
written with httptools' response parser, so the edge knows, from the bytes alone, whether an
answer is under way and how many are complete; the parser runs in C, and Python only at an
answer's head and end.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

import httptools

logger = logging.getLogger(__name__)


class NoBody(Exception):
    """The answer to a HEAD request ends with its head, whatever its Content-Length says."""


class Answers:
    def __init__(self, on_complete: Callable[[], None]) -> None:
        self.on_complete = on_complete
        self.parser = httptools.HttpResponseParser(self)
        self.done = 0  # answers written whole
        self.started = False  # an answer is partly written
        self.heads: deque[int] = deque()  # the numbers of the requests sent with HEAD
        self.lost = False  # the answers could not be read: the count is unknown

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        if self.lost:
            return
        self.started = True  # until the parser reaches the answer's end
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError as error:
            if not isinstance(error.__context__, NoBody):
                raise
            self.parser = httptools.HttpResponseParser(self)
        except httptools.HttpParserError:
            logger.warning("The edge lost track of the answers on a connection")
            self.lost, self.started = True, False

    def expect_head(self, request: int) -> None:
        self.heads.append(request)

    # Parser callbacks
    def on_headers_complete(self) -> None:
        if not self.heads or self.heads[0] != self.done + 1:
            return
        if self.parser.get_status_code() >= 200:  # 1xx (100 Continue) is not the answer
            self.heads.popleft()
            self.complete()
            raise NoBody

    def on_message_complete(self) -> None:
        if self.parser.get_status_code() >= 200:
            self.complete()
        else:
            self.started = False

    def complete(self) -> None:
        self.started = False
        self.done += 1
        self.on_complete()


class Relay(asyncio.Transport):
    """The socket's transport as uvicorn's protocol sees it. Once the edge has taken the
    connection over (``cut``), nothing uvicorn's protocol does reaches the socket; while the
    edge holds reading (``hold``), it cannot resume it."""

    def __init__(self, transport: asyncio.Transport, answers: Answers) -> None:
        super().__init__()
        self.transport, self.answers = transport, answers
        self.cut_off = False
        self.held = False

    def cut(self) -> None:
        self.cut_off = True

    def hold(self) -> None:
        self.held = True
        self.transport.pause_reading()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self.cut_off:
            self.transport.write(data)
            self.answers.feed(data)

    def close(self) -> None:
        if not self.cut_off:
            self.transport.close()

    def is_closing(self) -> bool:
        return self.cut_off or self.transport.is_closing()

    def pause_reading(self) -> None:
        if not self.cut_off:
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if not (self.cut_off or self.held):
            self.transport.resume_reading()

    def is_reading(self) -> bool:
        return self.transport.is_reading()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.transport.get_extra_info(name, default)

    def can_write_eof(self) -> bool:
        return self.transport.can_write_eof()

    def write_eof(self) -> None:
        if not self.cut_off:
            self.transport.write_eof()

    def abort(self) -> None:
        if not self.cut_off:
            self.transport.abort()

    def get_write_buffer_size(self) -> int:
        return self.transport.get_write_buffer_size()

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self.transport.get_write_buffer_limits()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self.transport.set_write_buffer_limits(high, low)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        # uvicorn hands a connection to another protocol only to upgrade it to a WebSocket,
        # which the worker turns off.
        raise NotImplementedError("the edge serves HTTP/1.1 only")

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self.transport.get_protocol()
