"""Admission without Redis (the embedded setup): nothing is reserved ahead; the rate is
counted in this process's memory and the quota checked by admission, then again inside the
storing transaction, which SQLite runs one at a time."""

from __future__ import annotations

from datetime import date

from accounts import quota
from submissions.intake.admission.ticket import Ticket


class InDatabase:
    def admit(self, visit_rate_key: str, form, ticket: Ticket, seen_key: str | None) -> bool:
        return False

    def reserve(self, ticket: Ticket, fenced: int | None = None) -> bool:
        return False

    def release(self, ticket: Ticket) -> None:
        """Nothing was reserved."""

    def recount(self, user_id, month: date) -> None:
        """The record is the count."""

    def reset(self, record: quota.LockedMonth, user_id, month: date) -> None:
        record.move_on(reset=True)

    def counted_by_the_database(self, ticket: Ticket) -> None:
        """Every admission is."""
