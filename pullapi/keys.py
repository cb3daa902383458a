"""API key format: ``ff_live_`` + 32 random base62 characters + their CRC32 in base62 (6).

The checksum lets secret scanners recognise a real key without asking the database, and lets
the service refuse a mistyped key before any lookup.
"""

from __future__ import annotations

import hashlib
import secrets
import string
import zlib

PREFIX = "ff_live_"
ALPHABET = string.digits + string.ascii_uppercase + string.ascii_lowercase
RANDOM_LENGTH = 32
CHECKSUM_LENGTH = 6
KEY_LENGTH = len(PREFIX) + RANDOM_LENGTH + CHECKSUM_LENGTH
DISPLAY_LENGTH = len(PREFIX) + 6


def base62(number: int, width: int) -> str:
    digits = ""
    while number:
        number, remainder = divmod(number, 62)
        digits = ALPHABET[remainder] + digits
    return digits.rjust(width, "0")


def checksum(random_part: str) -> str:
    return base62(zlib.crc32(random_part.encode()), CHECKSUM_LENGTH)


def generate() -> str:
    random_part = "".join(secrets.choice(ALPHABET) for _ in range(RANDOM_LENGTH))
    return f"{PREFIX}{random_part}{checksum(random_part)}"


def is_well_formed(key: str) -> bool:
    if len(key) != KEY_LENGTH or not key.startswith(PREFIX):
        return False
    body = key[len(PREFIX) :]
    if any(char not in ALPHABET for char in body):
        return False
    random_part, check = body[:RANDOM_LENGTH], body[RANDOM_LENGTH:]
    return secrets.compare_digest(checksum(random_part), check)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def display_prefix(key: str) -> str:
    return key[:DISPLAY_LENGTH]
