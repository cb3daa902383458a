"""Signed, expiring download links: ``/api/v1/files/{id}?sig=<expiry>.<mac>``.

The MAC is an HMAC-SHA256 over the file's id and the expiry, with a key derived from
SECRET_KEY for this purpose alone, so a link names one file until one moment and cannot be
changed to reach another file or a later one.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid

from django.conf import settings

from core import clock

VALID_SECONDS = 3600


def _key() -> bytes:
    return hashlib.sha256(b"formflow.files.links:" + settings.SECRET_KEY.encode()).digest()


def _mac(file_id: str, expires: int) -> str:
    message = f"{file_id}:{expires}".encode()
    return hmac.new(_key(), message, hashlib.sha256).hexdigest()


def signature(file_id: uuid.UUID | str, now: float | None = None) -> str:
    expires = int((clock.now().timestamp() if now is None else now) + VALID_SECONDS)
    return f"{expires}.{_mac(str(file_id), expires)}"


def url(file_id: uuid.UUID | str) -> str:
    return f"{settings.BASE_URL}/api/v1/files/{file_id}?sig={signature(file_id)}"


def valid(file_id: uuid.UUID, sig: str) -> bool:
    expires_text, _, mac = sig.partition(".")
    if not expires_text.isdigit() or len(expires_text) > 12 or len(mac) != 64:
        return False
    expires = int(expires_text)
    if expires < clock.now().timestamp():
        return False
    return hmac.compare_digest(mac, _mac(str(file_id), expires))
