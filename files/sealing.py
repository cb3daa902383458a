"""Files at rest, sealed: AES-256-GCM in 64 KiB chunks, keyed from FIELD_ENCRYPTION_KEYS.

A sealed file is a 32-byte header, ``MAGIC``, the sealing key's id (8 bytes) and a random salt
(16 bytes), then chunks of at most 64 KiB of the file, each encrypted and authenticated
(16-byte tag) under a key of this file alone (HKDF of the sealing key and the salt). A chunk's
nonce is its index and whether it is the last one; the header is each chunk's associated data.
So a changed, reordered, truncated or extended file, or a changed header, fails to open, and
a file is sealed and opened a chunk at a time: never held whole in memory.

Files stored before 1.2.0 are plaintext: they do not start with ``MAGIC`` and open as they
are once their bytes match the sha256 listed with them (``manage.py rotate_encryption_keys``
seals them).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from core import crypto

MAGIC = b"\x00FFSEAL1"
SALT_BYTES = 16
HEADER_BYTES = len(MAGIC) + crypto.FILE_KEY_ID_BYTES + SALT_BYTES
CHUNK_BYTES = 64 * 1024
TAG_BYTES = 16
SEALED_CHUNK_BYTES = CHUNK_BYTES + TAG_BYTES


class Unreadable(Exception):
    """A stored file that does not open: changed since it was sealed, sealed under a key no
    longer in FIELD_ENCRYPTION_KEYS, or a plaintext one that is not the file listed."""


def _cipher(secret: bytes, salt: bytes) -> AESGCM:
    file_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=salt,
                    info=b"formflow file").derive(secret)
    return AESGCM(file_key)


def _nonce(index: int, last: bool) -> bytes:
    return index.to_bytes(11, "big") + (b"\x01" if last else b"\x00")


class Sealer:
    """Seals one file as its bytes arrive: ``update`` and ``finish`` return what to write."""

    def __init__(self) -> None:
        key = crypto.file_keys()[0]
        salt = os.urandom(SALT_BYTES)
        self.header = MAGIC + key.id + salt
        self._aead = _cipher(key.secret, salt)
        self._index = 0
        self._pending = bytearray()
        self._started = False

    def update(self, data: bytes) -> bytes:
        self._pending += data
        out = [self._start()]
        # One chunk is always kept back: only ``finish`` knows which chunk is the last.
        whole = (len(self._pending) - 1) // CHUNK_BYTES
        if whole > 0:
            with memoryview(self._pending) as view:
                out += [self._seal(view[at:at + CHUNK_BYTES], last=False)
                        for at in range(0, whole * CHUNK_BYTES, CHUNK_BYTES)]
            del self._pending[:whole * CHUNK_BYTES]
        return b"".join(out)

    def finish(self) -> bytes:
        out = self._start() + self._seal(bytes(self._pending), last=True)
        self._pending.clear()
        return out

    def _start(self) -> bytes:
        if self._started:
            return b""
        self._started = True
        return self.header

    def _seal(self, chunk: bytes | memoryview, *, last: bool) -> bytes:
        sealed = self._aead.encrypt(_nonce(self._index, last), chunk, self.header)
        self._index += 1
        return sealed


def _read_exact(raw: Any, size: int) -> bytes:
    """``size`` bytes, fewer only at the end: a network stream may answer short reads."""
    parts, wanted = [], size
    while wanted:
        part = raw.read(wanted)
        if not part:
            break
        parts.append(part)
        wanted -= len(part)
    return b"".join(parts)


class Opened:
    """A stored file, read as its plaintext. ``key_id`` names the key that sealed it; None
    for a plaintext file from before 1.2.0. Each chunk is authenticated before any of its bytes
    is returned, and the first one at once, so a changed file is refused before a byte of it
    is served; a change further in stops the read there (``Unreadable``)."""

    def __init__(self, raw: Any, sha256: str) -> None:
        self._raw = raw
        head = _read_exact(raw, HEADER_BYTES)
        self._index = 0
        self._done = False
        self._at = 0  # how much of ``_buffer`` has been read
        if not head.startswith(MAGIC):
            self.key_id: bytes | None = None
            _check_plaintext(raw, head, sha256)
            self._buffer = b""
            return
        if len(head) < HEADER_BYTES:
            raise Unreadable("the file is shorter than its header")
        self.key_id = head[len(MAGIC):len(MAGIC) + crypto.FILE_KEY_ID_BYTES]
        self._header = head
        self._aead = _cipher(_secret_of(self.key_id), head[-SALT_BYTES:])
        self._ahead = _read_exact(raw, SEALED_CHUNK_BYTES)
        self._buffer = self._open_next()

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all that is left when negative); empty at the end."""
        if self._at == len(self._buffer) and not self._done:
            self._buffer, self._at = self._next_part(), 0
        if size < 0:
            return self._rest()
        taken = self._buffer[self._at:self._at + size]
        self._at += len(taken)
        return taken

    def _rest(self) -> bytes:
        parts = [self._buffer[self._at:]]
        self._at = len(self._buffer)
        while part := self.read(CHUNK_BYTES):
            parts.append(part)
        return b"".join(parts)

    def _next_part(self) -> bytes:
        if self.key_id is None:
            part = self._raw.read(CHUNK_BYTES) or b""
            self._done = not part
            return part
        return self._open_next()

    def _open_next(self) -> bytes:
        current = self._ahead
        self._ahead = _read_exact(self._raw, SEALED_CHUNK_BYTES)
        last = not self._ahead
        try:
            chunk = self._aead.decrypt(_nonce(self._index, last), current, self._header)
        except InvalidTag:
            raise Unreadable(f"chunk {self._index} does not authenticate") from None
        self._index += 1
        self._done = last
        return chunk

    def close(self) -> None:
        self._raw.close()


def _check_plaintext(raw: Any, head: bytes, sha256: str) -> None:
    """A file without the marker (stored by 1.1.0) has nothing to authenticate it but the
    sha256 listed with it: read through once and compared before a byte is served, so a file
    replaced at rest (or its marker altered) is refused like a sealed one, never served or
    sealed by the re-encryption command. Then back to its start."""
    digest = hashlib.sha256(head)
    while part := raw.read(CHUNK_BYTES):
        digest.update(part)
    if not hmac.compare_digest(digest.hexdigest(), sha256):
        raise Unreadable("a plaintext file whose sha256 is not the one listed")
    raw.seek(0)


def _secret_of(key_id: bytes) -> bytes:
    for key in crypto.file_keys():
        if key.id == key_id:
            return key.secret
    raise Unreadable(f"sealed under key {key_id.hex()}, which FIELD_ENCRYPTION_KEYS lacks")


def opened(raw: Any, *, sha256: str) -> Opened:
    """``raw`` (a stored file, open for reading, seekable) as its plaintext; ``Unreadable``
    (and ``raw`` closed) when it does not open, or, from before 1.2.0, is not the file whose
    ``sha256`` is listed."""
    try:
        return Opened(raw, sha256)
    except Unreadable:
        raw.close()
        raise
