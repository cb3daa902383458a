from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.db.models import Count, Max
from django.db.models.functions import TruncDate

from config import clock
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


@dataclass(frozen=True)
class Activity:
    daily: list[int]  # inbox submissions a day, oldest first, today last
    first_day: date
    last_at: datetime | None  # the newest inbox submission, however old


def activity(form_ids: list, days: int = 30) -> dict:
    """Each form's inbox over the last ``days`` days (UTC), and its newest submission: two
    statements for all the forms, each a walk of the inbox index."""
    today = clock.now().date()
    first_day = today - timedelta(days=days - 1)
    start = datetime(first_day.year, first_day.month, first_day.day, tzinfo=UTC)
    inbox = Submission.objects.filter(form_id__in=form_ids, status=Status.INBOX)
    per_day = (
        inbox.filter(submitted_at__gte=start)
        .annotate(day=TruncDate("submitted_at", tzinfo=UTC))
        .values_list("form_id", "day")
        .annotate(n=Count("id"))
        .order_by()
    )
    daily = {form_id: [0] * days for form_id in form_ids}
    for form_id, day, count in per_day:
        daily[form_id][(day - first_day).days] = count
    newest = dict(inbox.values_list("form_id").annotate(last=Max("submitted_at")).order_by())
    return {form_id: Activity(daily[form_id], first_day, newest.get(form_id))
            for form_id in form_ids}
