from __future__ import annotations

import math
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from django.db import connection
from django.db.models import OuterRef, Subquery

from core import clock
from core.infra import rawsql
from forms_app.models import Form
from submissions import folders
from submissions.models import Status, Submission
from submissions.search import Search


@dataclass(frozen=True)
class Page:
    rows: list[Submission]
    page: int
    limit: int
    total: int
    capped: bool = False  # more rows than ``total`` match (search_page)

    @property
    def total_pages(self) -> int:
        return math.ceil(self.total / self.limit)


def with_folder_sizes(forms: Iterable[Form]) -> list[Form]:
    """``forms`` with their ``submission_count`` (inbox) and ``spam_count`` set, read for
    all of them in two statements, not two for each form (submissions/folders.py)."""
    forms = list(forms)
    found = folders.sizes([form.pk for form in forms])
    for form in forms:
        form.submission_count = found[form.pk, Status.INBOX]
        form.spam_count = found[form.pk, Status.SPAM]
    return forms


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


# A search counts its matches up to here, and pages through the newest of them: counting every
# match of a word that is in every row would read them all.
SEARCH_LIMIT = 1000


def search_page(form: Form, search: Search, *, page: int, limit: int,
                status: str = Status.INBOX) -> Page:
    """A numbered page of the folder's matches, newest first; ``total`` stops at
    SEARCH_LIMIT (``Page.capped`` says so)."""
    rows = search.applied(Submission.objects.filter(form=form, status=status))
    newest_first = rows.order_by("-submitted_at", "-id")
    total = newest_first.values("pk")[: SEARCH_LIMIT + 1].count()
    start = (page - 1) * limit
    if start >= min(total, SEARCH_LIMIT):
        return Page([], page, limit, min(total, SEARCH_LIMIT), capped=total > SEARCH_LIMIT)
    window = list(newest_first[start:min(start + limit, SEARCH_LIMIT)])
    return Page(window, page, limit, min(total, SEARCH_LIMIT), capped=total > SEARCH_LIMIT)


def submission_of(form: Form, submission_id) -> Submission | None:
    """One submission of ``form``, in either folder; None for any other."""
    return Submission.objects.filter(form=form, pk=submission_id).first()


@dataclass(frozen=True)
class Activity:
    daily: list[int]  # inbox submissions a day, oldest first, today last
    first_day: date
    last_at: datetime | None  # the newest inbox submission, however old


def notification_subject(submission_id: str) -> str:
    """The subject the submission's page asked its owner's notification to carry (``_subject``,
    header-safe when stored); "" when it asked none or the submission is gone."""
    try:
        key = uuid.UUID(str(submission_id))
    except ValueError:  # a test event's id
        return ""
    return Submission.objects.filter(pk=key).values_list("subject", flat=True).first() or ""


def activity(form_ids: list, days: int = 30, zone: tzinfo = UTC) -> dict:
    """Each form's inbox over the last ``days`` days (``zone``'s days: the owner's), and its
    newest submission: two statements for all the forms.

    Each day is counted by its own range of the inbox index, (form, submitted_at), and the
    newest is the top of it: a GROUP BY over the days read and grouped every row of the
    month (150 ms for a form of 100,000), and the ORM took longer to compile thirty
    subqueries than the database took to run them, so the counts are one written statement.
    """
    if not form_ids:
        return {}
    today = clock.now().astimezone(zone).date()
    first_day = today - timedelta(days=days - 1)
    daily = {form_id: [0] * days for form_id in form_ids}
    for form_id, day, count in _daily_counts(form_ids, first_day, days, zone):
        daily[form_id][day] = count
    inbox = Submission.objects.filter(form=OuterRef("pk"), status=Status.INBOX)
    newest = dict(
        Form.objects.filter(pk__in=form_ids)
        .annotate(newest=Subquery(inbox.order_by("-submitted_at").values("submitted_at")[:1]))
        .values_list("pk", "newest")
    )
    return {form_id: Activity(daily[form_id], first_day, newest.get(form_id))
            for form_id in form_ids}


def _daily_counts(form_ids: list, first_day: date, days: int, zone: tzinfo) -> list[tuple]:
    """(form id, day number, count) for each form and day: one index range count each."""
    adapt = connection.ops.adapt_datetimefield_value
    edges = [adapt(datetime.combine(first_day + timedelta(days=n), time.min, zone)
                   .astimezone(UTC)) for n in range(days + 1)]
    spans = " UNION ALL ".join(["SELECT %s AS n, %s AS start, %s AS stop"] * days)
    table = rawsql.table(Submission)
    sql = (
        f"SELECT f.id, d.n, (SELECT count(*) FROM {table} s WHERE s.form_id = f.id "
        "AND s.status = %s AND s.submitted_at >= d.start AND s.submitted_at < d.stop) "
        f"FROM {rawsql.table(Form)} f, ({spans}) d "
        f"WHERE f.id IN ({rawsql.placeholders(len(form_ids))})"
    )
    params: list = [Status.INBOX]
    for n in range(days):
        params += [n, edges[n], edges[n + 1]]
    params += [rawsql.db_id(Form, form_id) for form_id in form_ids]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(_as_uuid(form_id), n, count) for form_id, n, count in cursor.fetchall()]


def _as_uuid(value) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(value)


def submissions_chosen(form: Form, ids: list, status: str | None = None) -> list[Submission]:
    """The submissions of ``form`` among ``ids`` (another form's ids choose nothing)."""
    rows = Submission.objects.filter(form=form, pk__in=ids)
    return list(rows.filter(status=status) if status else rows)
