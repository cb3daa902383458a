"""A form's uploads as the multipart parser reads them: each file hashed and sealed
(files/sealing.py) chunk by chunk into a temporary file (in memory up to 256 KiB, then on
disk), with the form's limits checked as the bytes arrive, so no file is ever held whole in
memory, an oversized one is refused before the rest is read, and what reaches the temporary
file and the store is already encrypted."""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass, field
from typing import Any

from django.core.files.uploadhandler import FileUploadHandler

from core.errors import ServiceError
from files.sealing import Sealer
from files.sniff import HEAD_BYTES, accepted, sniff
from forms_app.limits import MAX_FILE_BYTES, MAX_FILES

SPOOL_BYTES = 256 * 1024
BODY_ALLOWANCE = 1024 * 1024  # the text fields and the multipart framing
LARGEST_BODY = MAX_FILE_BYTES * MAX_FILES + BODY_ALLOWANCE


@dataclass(frozen=True)
class Limits:
    """A form's ``fileUploads``."""

    max_bytes: int
    max_files: int
    types: list[str]

    @classmethod
    def of(cls, config: dict[str, Any] | None) -> Limits | None:
        if not config:
            return None
        return cls(config["maxBytes"], config["maxFiles"], list(config["types"]))

    @property
    def body_limit(self) -> int:
        return self.max_bytes * self.max_files + BODY_ALLOWANCE


def receiving(form) -> Received | None:
    """What keeps the files of a submission to ``form``; None when it takes no files."""
    limits = Limits.of(form.file_uploads)
    return Received(limits) if limits is not None else None


def file_too_large(field_name: str, limit: int) -> ServiceError:
    return ServiceError("file_too_large", f"A file may be at most {limit} bytes.", 413,
                        {field_name: f"is larger than {limit} bytes"})


def too_many_files(field_name: str, limit: int) -> ServiceError:
    return ServiceError("too_many_files", f"A submission may have at most {limit} files.",
                        413, {field_name: f"is past the {limit} files a submission may have"})


def file_type_refused(field_name: str, content_type: str) -> ServiceError:
    return ServiceError("file_type_not_allowed", "This form does not accept this type of file.",
                        415, {field_name: f"is {content_type}, which this form does not accept"})


@dataclass
class ReceivedFile:
    field: str
    name: str
    size: int  # of the file as sent; the sealed one is longer
    sha256: str  # of the file as sent
    content_type: str
    data: Any  # the temporary file holding it sealed, at its end

    def __str__(self) -> str:
        return f"[File: {self.name}, {self.size} bytes]"  # the field's value, as spec.md says

    def close(self) -> None:
        self.data.close()


@dataclass
class Received:
    """The files of one request, until they are stored or the request ends."""

    limits: Limits
    files: list[ReceivedFile] = field(default_factory=list)
    _open: list[Any] = field(default_factory=list)

    def handler(self, request) -> KeepingUploadHandler:
        return KeepingUploadHandler(self, request)

    @property
    def total_bytes(self) -> int:
        return sum(item.size for item in self.files)

    def spool(self) -> Any:
        data = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115  # closed by close()
        self._open.append(data)
        return data

    def close(self) -> None:
        for data in self._open:
            data.close()
        self._open.clear()


class KeepingUploadHandler(FileUploadHandler):
    chunk_size = 256 * 1024  # fewer, larger reads: the parser's per-chunk work is in Python
    def __init__(self, received: Received, request=None) -> None:
        super().__init__(request)
        self.received = received
        self.limits = received.limits

    def new_file(self, field_name: str, file_name: str, *args: Any, **kwargs: Any) -> None:
        super().new_file(field_name, file_name, *args, **kwargs)
        if len(self.received.files) >= self.limits.max_files:
            raise too_many_files(field_name, self.limits.max_files)
        self.data = self.received.spool()
        self.digest = hashlib.sha256()
        self.sealer = Sealer()
        self.size = 0
        self.head = b""

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        self.size += len(raw_data)
        if self.size > self.limits.max_bytes:
            raise file_too_large(self.field_name, self.limits.max_bytes)
        if len(self.head) < HEAD_BYTES:
            self.head += raw_data[: HEAD_BYTES - len(self.head)]
        self.digest.update(raw_data)
        self.data.write(self.sealer.update(raw_data))
        return None

    def file_complete(self, file_size: int) -> ReceivedFile:  # type: ignore[override]
        content_type = sniff(self.head)
        if not accepted(content_type, self.limits.types):
            raise file_type_refused(self.field_name, content_type)
        self.data.write(self.sealer.finish())
        received = ReceivedFile(
            field=self.field_name, name=self.file_name or "", size=self.size,
            sha256=self.digest.hexdigest(), content_type=content_type, data=self.data,
        )
        self.received.files.append(received)
        return received
