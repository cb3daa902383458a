"""Encryption at rest (secrets, and the keys of stored files): the first FIELD_ENCRYPTION_KEYS
key encrypts, all decrypt."""

import base64
import hashlib
from dataclasses import dataclass
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

__all__ = ["InvalidToken", "decrypt", "encrypt"]


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(key.encode()) for key in keys])


def fernet() -> MultiFernet:
    return _fernet(tuple(settings.FIELD_ENCRYPTION_KEYS))


def encrypt(value: str) -> str:
    return fernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    return fernet().decrypt(token.encode()).decode()


def rotate(token: str) -> str:
    """Re-encrypt a token under the first key (it may have been made with any of them)."""
    return fernet().rotate(token.encode()).decode()


@dataclass(frozen=True)
class FileKey:
    """A key for files at rest, derived from one FIELD_ENCRYPTION_KEYS key. ``id`` names it in
    a file's header (a hash of the key, never the key), so a file says which key sealed it."""

    id: bytes
    secret: bytes


FILE_KEY_ID_BYTES = 8


@lru_cache(maxsize=4)
def _file_keys(keys: tuple[str, ...]) -> tuple[FileKey, ...]:
    derived = []
    for key in keys:
        # Its own key for this use, so files and field secrets never share one.
        secret = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                      info=b"formflow files at rest").derive(base64.urlsafe_b64decode(key))
        ident = hashlib.sha256(b"formflow file key id:" + secret).digest()[:FILE_KEY_ID_BYTES]
        derived.append(FileKey(ident, secret))
    return tuple(derived)


def file_keys() -> tuple[FileKey, ...]:
    """The keys for files at rest: the first seals, all open."""
    return _file_keys(tuple(settings.FIELD_ENCRYPTION_KEYS))
