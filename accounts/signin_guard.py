"""Failed sign-ins per address, counted across every sign-in surface (API login and token, the
dashboard's and the admin's sign-in pages): at most 10 in a 15-minute window, then every
sign-in for that address answers 429 until the window ends, even with the right password, so
guessing one account's password from many addresses gains nothing.
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache

from accounts.models import normalize_email
from config import ratelimit
from config.errors import ServiceError

MAX_FAILURES = 10
WINDOW_SECONDS = 15 * 60


def _key(email: str) -> tuple[str, int]:
    now = ratelimit.now()
    window = int(now // WINDOW_SECONDS)
    digest = hashlib.sha256(normalize_email(email).encode()).hexdigest()[:32]
    return f"signin:failed:{digest}:{window}", max(1, int((window + 1) * WINDOW_SECONDS - now))


def too_many_attempts(retry_after: int) -> ServiceError:
    return ServiceError(
        "too_many_attempts",
        "Too many failed sign-ins for this address. Try again later.",
        status_code=429,
        headers={"Retry-After": str(retry_after)},
    )


def check(email: str) -> None:
    """Raise 429 while the address has used up its failed sign-ins."""
    key, retry_after = _key(email)
    if (cache.get(key) or 0) >= MAX_FAILURES:
        raise too_many_attempts(retry_after)


def failed(email: str) -> None:
    key, retry_after = _key(email)
    cache.add(key, 0, timeout=retry_after)
    cache.incr(key)
