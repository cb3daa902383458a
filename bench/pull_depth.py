"""Does a pull API page cost the same at row 1 as deep into a big form?

    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/formflow
    .venv/bin/python bench/pull_depth.py --rows 1000000

Seeds a throwaway database with --rows submissions (plus as many for a second form, so the
index has to pick one form out), then times full HTTP requests to GET /api/v1/submissions
with a cursor near the start, the middle and the end, in both orders.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

from _setup import scratch_database, timed


def seed(form, rows: int) -> None:
    from django.db import connection

    from submissions.models import Submission

    base = datetime(2025, 1, 1, tzinfo=UTC)
    batch = []
    for i in range(rows):
        batch.append(
            Submission(form=form, submitted_at=base + timedelta(seconds=i), data=[["n", i]])
        )
        if len(batch) == 10_000:
            Submission.objects.bulk_create(batch)
            batch = []
    Submission.objects.bulk_create(batch)
    from submissions import feed

    feed.step(batch=rows * 2)  # placed in the feed, as readers and beat place rows
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE submissions_submission")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()

    with scratch_database():
        from django.db import connection
        from rest_framework.test import APIClient

        from accounts.models import User
        from forms_app.services import form_create
        from pullapi.cursors import Position, encode
        from pullapi.services import api_key_create

        owner = User.objects.create_user("bench@example.com", "bench-password", is_verified=True)
        form, other = form_create(owner=owner, name="Big"), form_create(owner=owner, name="Other")
        print(f"Seeding {args.rows:,} rows per form on {connection.vendor} ...", flush=True)
        seed(form, args.rows)
        seed(other, args.rows)
        _, key = api_key_create(owner=owner, name="bench", forms=[str(form.pk)])
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        base = datetime(2025, 1, 1, tzinfo=UTC)

        print(f"{'order':<5} {'depth':>10} {'median ms':>10} {'p95 ms':>8}")
        for order in ("desc", "asc"):
            for depth in (1, args.rows // 2, args.rows - 100):
                row = depth if order == "asc" else args.rows - depth
                position = Position(base + timedelta(seconds=row), 0)
                cursor = encode(form_id=form.pk, order=order, position=position)
                params = {"formId": form.slug, "limit": 100, "order": order, "cursor": cursor}

                def request(params=params):
                    from django.core.cache import cache

                    cache.clear()  # stay under the 60/min key limit while measuring
                    response = client.get("/api/v1/submissions", params)
                    assert response.status_code == 200, response.content

                result = timed(request, args.repeat)
                print(
                    f"{order:<5} {depth:>10,} {result['median_ms']:>10.2f} {result['p95_ms']:>8.2f}"
                )


if __name__ == "__main__":
    main()
