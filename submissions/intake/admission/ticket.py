"""One admitted submission's reservation, and what admission refuses with."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from core.errors import ServiceError, retry_later


@dataclass
class Ticket:
    """One admitted submission: where its quota is counted, and whether Redis holds it."""

    user_id: object
    month: date
    limit: int
    reserved: bool  # counted in Redis already; False: check in the storing transaction
    # Whether the fingerprint was seen in the last 10 minutes; None when admission did not
    # look (no fingerprint, no Redis, Redis away).
    duplicate: bool | None = None
    token: str = ""  # the reservation's id in Redis: the submission's id
    # The counter's generation when it reserved: stored only while the record is at it.
    generation: int | None = None
    # Admitted by the database while a configured Redis was away: its store must move the
    # record's generation on, so reservations Redis still holds are admitted again before
    # they store (they are not in the record the store counts).
    fence: bool = False
    # Stored and counted: the reservation is the record's now, never given back.
    kept: bool = False


def monthly_limit_reached() -> ServiceError:
    return ServiceError(
        "monthly_limit_reached",
        "This form's account has used its monthly submission limit.",
        status_code=403,
    )


def rate_limited(retry_after: int) -> ServiceError:
    return retry_later("rate_limited", "Too many requests. Try again later.", retry_after)
