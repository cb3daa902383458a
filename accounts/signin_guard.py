"""Failed sign-ins per address, counted across every sign-in surface (API login and token, the
dashboard's and the admin's sign-in pages): at most 10 in a 15-minute window, then every
sign-in for that address answers 429 until the window ends, even with the right password, so
guessing one account's password from many addresses gains nothing.
"""

from __future__ import annotations

import hashlib

from accounts.models import normalize_email
from config import ratelimit
from config.errors import ServiceError, retry_later

MAX_FAILURES = 10
WINDOW_SECONDS = 15 * 60


def _window(email: str) -> ratelimit.Window:
    digest = hashlib.sha256(normalize_email(email).encode()).hexdigest()[:32]
    return ratelimit.Window(f"signin-failed:{digest}", WINDOW_SECONDS)


def too_many_attempts(retry_after: int) -> ServiceError:
    return retry_later(
        "too_many_attempts", "Too many failed sign-ins for this address. Try again later.",
        retry_after,
    )


def check(email: str) -> None:
    """Raise 429 while the address has used up its failed sign-ins."""
    window = _window(email)
    if window.count() >= MAX_FAILURES:
        raise too_many_attempts(window.retry_after())


def failed(email: str) -> None:
    _window(email).add()
