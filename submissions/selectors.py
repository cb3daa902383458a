from __future__ import annotations

import math
from dataclasses import dataclass

from forms_app.models import Form
from submissions import folders
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
    large its number: it is never turned into an OFFSET the database cannot represent.

    Deep pages skip through the folder's index alone, (form, submitted_at, id), to find the
    page's ids, and read only those rows: an OFFSET over whole rows read every row it skipped.
    A page in the older half is counted from the oldest end, so no page skips more than half.
    """
    rows = Submission.objects.filter(form=form, status=status)
    total = folders.size(form.pk, status)
    start = (page - 1) * limit
    if start >= total:
        return Page([], page, limit, total)
    end = min(start + limit, total)
    if start <= total - end:
        ids = rows.order_by("-submitted_at", "-id").values_list("pk", flat=True)[start:end]
    else:  # from the oldest end: the same rows, skipping total - end of them
        ids = rows.order_by("submitted_at", "id").values_list("pk", flat=True)[total - end:
                                                                              total - start]
    # One statement: the ids as a subquery, then only those rows.
    window = list(Submission.objects.filter(pk__in=ids).order_by("-submitted_at", "-id"))
    return Page(window, page, limit, total)


def submission_of(form: Form, submission_id) -> Submission | None:
    """One submission of ``form``, in either folder; None for any other."""
    return Submission.objects.filter(form=form, pk=submission_id).first()
