from __future__ import annotations

import math
from dataclasses import dataclass

from forms_app.models import Form
from submissions.models import Status, Submission


@dataclass(frozen=True)
class Page:
    rows: list[Submission]
    page: int
    limit: int
    total: int

    @property
    def total_pages(self) -> int:
        return math.ceil(self.total / self.limit)


def submissions_page(form: Form, *, page: int, limit: int, status: str = Status.INBOX) -> Page:
    """A numbered page of one folder, newest first. A page past the end is empty, however
    large its number: it is never turned into an OFFSET the database cannot represent."""
    rows = Submission.objects.filter(form=form, status=status).order_by("-submitted_at", "-id")
    total = rows.count()
    start = (page - 1) * limit
    window = list(rows[start : start + limit]) if start < total else []
    return Page(window, page, limit, total)
