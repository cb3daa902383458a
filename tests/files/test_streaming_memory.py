"""An upload streams to storage: the web process never holds a whole file in memory (contract,
"File uploads (opt in, per form)"; issue 36). A 24 MiB file is sent over a real socket to the
production web server in this process, from a generator, while ``tracemalloc`` records the
peak of every Python allocation the process makes (the server's loop and threads, the storage
client, the test's own client); the peak must stay far below the file. Keeping the body, the
parsed file or an S3 part in memory each puts it past 24 MiB.

The S3-compatible server runs in a process of its own here: moto keeps objects in memory, and
in this process its copy of the file would be counted as ours."""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from files.models import StoredFile
from files.services import storage
from tests.conftest import CommitClient, create_key
from tests.files.conftest import LocalStore, S3Store
from tests.files.helpers import PNG, upload_form
from tests.serving.conftest import parse, read_answer

MIB = 1024 * 1024
FILE_BYTES = 24 * MIB
PEAK_LIMIT = 8 * MIB  # a third of the file: room for buffers, none for the file
CHUNK_BYTES = 64 * 1024
BOUNDARY = "StreamedUploadBoundary"


@pytest.fixture(scope="module")
def moto_process() -> Iterator[str]:
    """moto's S3 server in a child process, so its copy of the file is not counted here."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(10)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the S3 server did not start on port {port}")


@pytest.fixture(params=["local", "s3"])
def streamed_store(request, settings, tmp_path):
    if request.param == "local":
        chosen: LocalStore | S3Store = LocalStore(tmp_path / "uploads")
    else:
        chosen = S3Store(request.getfixturevalue("moto_process"),
                         f"t{os.getpid()}-{os.urandom(4).hex()}")
    settings.STORAGES = {**settings.STORAGES, "uploads": chosen.setting()}
    return chosen


def open_storage_in_every_thread(edge) -> None:
    """Each thread of a running web process has opened its storage before any upload: boto3
    reads its S3 model (several MiB) once a thread. The measure is of the upload alone."""
    barrier = threading.Barrier(edge.bridge.threads)
    # Made here, once: threads that make it at the same moment each keep their own, and only
    # the last one made stays.
    uploads = storage()

    def open_storage() -> None:
        barrier.wait(10)  # every thread of the pool, not one of them twice
        uploads.exists("warm-up")

    for done in [edge.bridge.executor.submit(open_storage) for _ in range(edge.bridge.threads)]:
        done.result(30)


def file_chunks(digest) -> Iterator[bytes]:
    """The file, a PNG's signature and then seeded random bytes, 64 KiB at a time; each chunk
    is hashed as it goes, so the client never holds the file either."""
    rng = random.Random(36)
    sent = 0
    while sent < FILE_BYTES:
        chunk = PNG if sent == 0 else rng.randbytes(min(CHUNK_BYTES, FILE_BYTES - sent))
        digest.update(chunk)
        sent += len(chunk)
        yield chunk


def multipart_framing() -> tuple[bytes, bytes]:
    head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"photo\"; "
            f"filename=\"big.png\"\r\nContent-Type: image/png\r\n\r\n").encode()
    return head, f"\r\n--{BOUNDARY}--\r\n".encode()


def stream_upload(edge, slug: str, digest) -> tuple[int, bytes]:
    """POST the file in chunks on one connection; the answer's status and body."""
    head, tail = multipart_framing()
    length = len(head) + FILE_BYTES + len(tail)
    request_head = (f"POST /api/v1/f/{slug} HTTP/1.1\r\nHost: localhost\r\n"
                    f"Connection: close\r\nAccept: application/json\r\n"
                    f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                    f"Content-Length: {length}\r\n\r\n").encode()
    with edge.connect(timeout=60) as conn:
        conn.sendall(request_head + head)
        for chunk in file_chunks(digest):
            conn.sendall(chunk)
        conn.sendall(tail)
        answer = read_answer(conn)
    return answer.status, answer.body


def downloaded_digest(edge, url: str) -> tuple[int, str]:
    """Read the download link's answer a piece at a time: its body's size and sha256."""
    parts = urlsplit(url)
    with edge.connect(timeout=60) as conn:
        conn.sendall(f"GET {parts.path}?{parts.query} HTTP/1.1\r\nHost: localhost\r\n"
                     f"Connection: close\r\n\r\n".encode())
        raw = b""
        while b"\r\n\r\n" not in raw:
            received = conn.recv(65536)
            assert received, f"the connection closed before the answer's head: {raw!r}"
            raw += received
        head, _, body = raw.partition(b"\r\n\r\n")
        assert parse(head + b"\r\n\r\n").status == 200, raw[:300]
        digest, size = hashlib.sha256(body), len(body)
        while chunk := conn.recv(65536):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def test_a_24_mib_upload_never_sits_whole_in_memory(edge, user, settings, streamed_store):
    settings.SERVER_BODY_TIMEOUT = 60  # read per connection; tracing slows the upload
    form = upload_form(user, maxBytes=25 * MIB, maxFiles=1, types=["image/png"])
    sent = hashlib.sha256()
    open_storage_in_every_thread(edge)

    tracemalloc.start()
    try:
        status, answer = stream_upload(edge, form.slug, sent)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert status == 200, answer[:300]
    assert peak < PEAK_LIMIT, f"{peak / MIB:.1f} MiB at the peak for a 24 MiB file"
    row = StoredFile.objects.get()
    assert (row.size, row.sha256) == (FILE_BYTES, sent.hexdigest())
    assert len(streamed_store.keys()) == 1
    puller = CommitClient()
    puller.credentials(HTTP_AUTHORIZATION=f"Bearer {create_key(user, [form])}")
    (listed,) = puller.get("/api/v1/submissions", {"formId": str(form.pk)}).json()["data"]
    tracemalloc.start()
    try:
        # Decrypted as it streams: a sealed chunk at a time, never the whole file.
        downloaded = downloaded_digest(edge, listed["files"][0]["url"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert downloaded == (FILE_BYTES, sent.hexdigest())
    assert peak < PEAK_LIMIT, f"{peak / MIB:.1f} MiB at the download's peak for a 24 MiB file"
