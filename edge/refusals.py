"""The answers the edge gives without the app: JSON in the API's shape, never text or HTML."""

from __future__ import annotations

import json
from http import HTTPStatus


class Refusal(Exception):
    """An answer the server gives without the app; raised from the parser's callbacks."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def bad_request() -> Refusal:
    return Refusal(400, "bad_request", "The request is not valid HTTP.")


def timeout() -> Refusal:
    return Refusal(408, "request_timeout", "The request was not received in time.")


def incomplete_body() -> Refusal:
    return Refusal(400, "incomplete_body", "The request body ended before its Content-Length.")


def uri_too_long() -> Refusal:
    return Refusal(414, "uri_too_long", "The request URL is too long.")


def headers_too_large(message: str = "The request headers are too large.") -> Refusal:
    return Refusal(431, "headers_too_large", message)


def busy() -> Refusal:
    return Refusal(503, "service_unavailable", "The server is busy. Please try again shortly.")


def response(refusal: Refusal, headers: tuple = ()) -> bytes:
    body = json.dumps({"error": refusal.code, "message": refusal.message}).encode()
    phrase = HTTPStatus(refusal.status).phrase.encode()
    head = [b"HTTP/1.1 %d %s\r\n" % (refusal.status, phrase)]
    fields = (
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *headers,
    )
    head.extend(name + b": " + value + b"\r\n" for name, value in fields)
    return b"".join(head) + b"\r\n" + body
