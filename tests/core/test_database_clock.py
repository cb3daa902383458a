from datetime import UTC, datetime

import pytest
from django.db import connection

from core.infra.dbtime import DatabaseNow
from submissions.models import Submission
from tests.conftest import add_submission


def stored_text(submission):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT CAST(submitted_at AS TEXT) FROM submissions_submission WHERE id = %s",
            [submission.pk.hex],
        )
        return cursor.fetchone()[0]


def django_text(moment):
    return connection.ops.adapt_datetimefield_value(moment)


def test_a_stamped_time_matches_itself_as_a_query_parameter(form):
    submission = add_submission(form, {"a": "1"})

    same = Submission.objects.filter(pk=submission.pk, submitted_at=submission.submitted_at)
    assert same.exists()


@pytest.mark.sqlite  # PostgreSQL stores a real timestamp type
def test_sqlite_stamps_the_text_django_writes(form):
    submission = add_submission(form, {"a": "1"})

    assert stored_text(submission) == django_text(submission.submitted_at)


@pytest.mark.sqlite  # PostgreSQL stores a real timestamp type
@pytest.mark.parametrize(
    ("instant", "expected"),
    [
        ("2026-03-04 05:06:07.890", datetime(2026, 3, 4, 5, 6, 7, 890000, tzinfo=UTC)),
        ("2026-03-04 05:06:07.000", datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)),
    ],
)
def test_sqlite_clock_text_for_whole_and_fractional_seconds(form, instant, expected):
    class FixedNow(DatabaseNow):
        sqlite_instant = f"'{instant}'"

    submission = add_submission(form, {"a": "1"})
    Submission.objects.filter(pk=submission.pk).update(submitted_at=FixedNow())

    assert stored_text(submission) == django_text(expected)
