"""Reads a public submission's fields from JSON, urlencoded or multipart bodies, in order.

File parts are counted and thrown away chunk by chunk: no file content reaches memory beyond
one chunk, the disk or the database.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest, QueryDict, UnreadablePostError
from django.http.multipartparser import MultiPartParser, MultiPartParserError

from core.errors import INCOMPLETE_BODY, ServiceError
from files.receiving import Received
from submissions import validation

MAX_BODY_BYTES = 10 * 1024 * 1024
MAX_FIELDS = 200


# Django decodes form fields with errors="replace": invalid UTF-8 became U+FFFD and was stored
# as if the client had sent it. This codec is UTF-8 that refuses, whatever errors= it is asked
# for, so a body that is not UTF-8 is refused instead of silently changed.
STRICT_UTF8 = "formflow-strict-utf-8"


def _strict_utf8(name: str) -> codecs.CodecInfo | None:
    if name.replace("-", "_") != STRICT_UTF8.replace("-", "_"):
        return None
    utf8 = codecs.lookup("utf-8")
    return codecs.CodecInfo(
        name=STRICT_UTF8,
        encode=lambda text, errors="strict": utf8.encode(text, "strict"),
        decode=lambda data, errors="strict": utf8.decode(data, "strict"),
    )


codecs.register(_strict_utf8)


def not_utf8() -> ServiceError:
    return validation.invalid({"body": "is not valid UTF-8 text"})



def too_large(limit: int = MAX_BODY_BYTES) -> ServiceError:
    size = "10 MiB" if limit == MAX_BODY_BYTES else f"{limit} bytes"
    return ServiceError(
        "payload_too_large", f"The submission is larger than {size}.", status_code=413
    )


def too_many_fields() -> ServiceError:
    return ServiceError(
        "too_many_fields", f"A submission may have at most {MAX_FIELDS} fields.", status_code=413
    )


class FilePart(str):
    """A file part's placeholder (``[File: <name>, <n> bytes]``): stored as the text it is,
    and known for a file by the field rules (submissions/intake/rules.py), since a visitor
    could type the same text into a text field."""

    __slots__ = ()


@dataclass(frozen=True)
class DiscardedFile:
    name: str
    size: int

    def __str__(self) -> str:
        return f"[File: {self.name}, {self.size} bytes]"

    def close(self) -> None:
        """Django closes the files it parsed when a later part is refused; nothing is open."""


class CountingUploadHandler(FileUploadHandler):
    """Counts each file's bytes and keeps none of them."""

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        return None  # dropping the chunk: the parser still counts its length for us

    def file_complete(self, file_size: int) -> DiscardedFile:  # type: ignore[override]
        return DiscardedFile(self.file_name or "", file_size)


class OrderedMultiPartParser(MultiPartParser):
    """Django's parser, also noting where each file sat among the text fields.

    A file is completed just before the next part is read, so at that moment the text
    fields parsed so far are exactly those that came before it.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.file_positions: list[tuple[int, str]] = []

    def handle_file_complete(self, old_field_name: str, counters: list[int]) -> None:
        self.file_positions.append((len(self._post), old_field_name))  # type: ignore[attr-defined]
        super().handle_file_complete(old_field_name, counters)


def _merge(pairs: list[tuple[str, Any]]) -> list[list[Any]]:
    """Repeated names become one field holding a list, at the place of the first."""
    merged: dict[str, list[Any]] = {}
    for name, value in pairs:
        merged.setdefault(name, []).append(value)
    return [[name, values[0] if len(values) == 1 else values] for name, values in merged.items()]


def _json_pairs(request: HttpRequest) -> list[tuple[str, Any]]:
    try:
        data = json.loads(request.body or b"null")
    except (ValueError, UnicodeDecodeError):
        raise ServiceError("malformed_body", "The body is not valid JSON.") from None
    except RecursionError:  # far deeper than the 32 levels a value may have
        raise validation.invalid({"body": "is nested too deeply"}) from None
    if not isinstance(data, dict):
        raise ServiceError("malformed_body", "The JSON body must be an object of fields.")
    if len(data) > MAX_FIELDS:
        raise too_many_fields()
    return list(data.items())


def _text_json_pairs(request: HttpRequest) -> list[tuple[str, Any]] | None:
    """A text/plain body that is a JSON object: what fetch() sends when the Content-Type is
    forgotten. It is taken as JSON, and the request is marked so the answer is JSON too.
    Anything else in text/plain (an HTML form's enctype="text/plain") is None: a 415."""
    try:
        data = json.loads(request.body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    if len(data) > MAX_FIELDS:
        raise too_many_fields()
    request.body_is_json = True  # type: ignore[attr-defined]
    return list(data.items())


def _urlencoded_pairs(request: HttpRequest) -> list[tuple[str, Any]]:
    # Always UTF-8 (the form encoding has no charset of its own), and strictly so.
    try:
        form = QueryDict(request.body, encoding=STRICT_UTF8)
    except TooManyFieldsSent as error:
        # QueryDict reports every ValueError from parsing as too many fields; a decoding
        # error is one too.
        if isinstance(error.__cause__, UnicodeError):
            raise not_utf8() from None
        raise
    return [(name, value) for name, values in form.lists() for value in values]


def _part_encoding(request: HttpRequest) -> str:
    """The declared charset, or UTF-8; UTF-8 is read strictly. (Django keeps a declared
    charset only when Python knows it, so the lookup cannot fail.)"""
    declared = request.encoding or "utf-8"
    return STRICT_UTF8 if codecs.lookup(declared).name == "utf-8" else declared


def malformed_multipart() -> ServiceError:
    return ServiceError("malformed_body", "The multipart body could not be parsed.")


# RFC 2046: 1 to 70 characters, of these, not ending in a space.
BOUNDARY = re.compile(r"[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]")


class _Watched:
    """The body as the multipart parser reads it, keeping its first and last bytes and their
    count: Django's parser is lenient (a body whose boundary is not the declared one was read
    as a field holding the whole body), so the framing is checked here."""

    def __init__(self, stream: HttpRequest, keep: int) -> None:
        self.stream, self.keep = stream, keep
        self.head, self.tail, self.count = b"", b"", 0

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        if len(self.head) < self.keep:
            self.head += data[: self.keep - len(self.head)]
        self.tail = (self.tail + data)[-self.keep :]
        self.count += len(data)
        return data

    def framed_by(self, boundary: bytes, length: int) -> bool:
        """Opens with the first delimiter, closes with the last, and is all there."""
        return (
            self.head.startswith(b"--" + boundary + b"\r\n")
            and self.tail.rstrip(b"\r\n").endswith(b"--" + boundary + b"--")
            and self.count == length
        )


def _multipart_pairs(request: HttpRequest, uploads: Received | None) -> list[tuple[str, Any]]:
    boundary = (request.content_params or {}).get("boundary", "")
    if not BOUNDARY.fullmatch(boundary):
        raise malformed_multipart()
    body = _Watched(request, len(boundary) + 8)
    # A form with uploads on keeps its files (files/receiving.py); any other counts them.
    handler = uploads.handler(request) if uploads else CountingUploadHandler(request)
    try:
        parser = OrderedMultiPartParser(request.META, body, [handler], _part_encoding(request))
        post, files = parser.parse()
    except MultiPartParserError:
        raise malformed_multipart() from None
    if not body.framed_by(boundary.encode("ascii"), int(request.META["CONTENT_LENGTH"])):
        raise malformed_multipart()
    text_names = list(post.keys())
    names: list[str] = []
    for position, file_name in parser.file_positions:
        names.extend(name for name in text_names[:position] if name not in names)
        if file_name not in names:
            names.append(file_name)
    names.extend(name for name in text_names if name not in names)
    return [
        (name, value)
        for name in names
        for value in [*post.getlist(name), *(FilePart(f) for f in files.getlist(name))]
    ]


def read_fields(request: HttpRequest, uploads: Received | None = None) -> list[list[Any]]:
    """The submitted fields as ``[[name, value], ...]``; raises ServiceError on bad input.

    ``uploads``: the form takes files; a multipart body may then be as large as its limits
    allow, and its files are kept in ``uploads`` (a file field still holds the placeholder)."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    content_type = request.content_type or ""
    if uploads is not None and content_type != "multipart/form-data":
        uploads = None
    limit = MAX_BODY_BYTES if uploads is None else uploads.limits.body_limit
    if length > limit:
        raise too_large(limit)
    try:
        if content_type == "application/json" or content_type.endswith("+json"):
            pairs = _json_pairs(request)
        elif content_type == "application/x-www-form-urlencoded":
            pairs = _urlencoded_pairs(request)
        elif content_type == "multipart/form-data":
            pairs = _multipart_pairs(request, uploads)
        elif content_type == "text/plain" and (as_json := _text_json_pairs(request)) is not None:
            pairs = as_json
        else:
            raise ServiceError(
                "unsupported_media_type",
                "Send JSON, application/x-www-form-urlencoded or multipart/form-data.",
                status_code=415,
            )
    except RequestDataTooBig:
        raise too_large() from None
    except UnreadablePostError:
        raise ServiceError(*INCOMPLETE_BODY) from None
    except UnicodeError:
        raise not_utf8() from None
    except (TooManyFieldsSent, TooManyFilesSent):
        raise too_many_fields() from None
    if len(pairs) > MAX_FIELDS:
        raise too_many_fields()
    merged = _merge(pairs)
    validation.check(merged)
    return merged
