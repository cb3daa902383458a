"""What one public submission costs: time and database queries per request.

    .venv/bin/python bench/submit.py --requests 500 [--rules 10]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/formflow .venv/bin/python bench/submit.py

Posts JSON submissions through the whole Django stack (middleware, checks, the quota
update, the outbox rows for two webhook integrations) against a throwaway database.
Deliveries are queued to an in-memory broker, so only the request itself is measured.
``--rules N``: the form checks N field rules (bench/field_rules.py). The CPU this process
spends per submission is given too: unlike the time, it hardly moves when other programs
share the machine.
"""

from __future__ import annotations

import argparse
import time

from _setup import scratch_database, timed
from field_rules import RULES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--rules", type=int, default=0, choices=range(len(RULES) + 1),
                        metavar=f"0-{len(RULES)}", help="field rules on the form (default none)")
    args = parser.parse_args()

    with scratch_database():
        from django.conf import settings
        from django.db import connection
        from django.test import Client

        from accounts.models import User
        from forms_app.services import form_create
        from integrations.services import integration_create

        settings.CELERY_TASK_ALWAYS_EAGER = False
        settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
        owner = User.objects.create_user(
            "bench@example.com", "bench-password", is_verified=True, monthly_submission_limit=10**9
        )
        form = form_create(owner=owner, name="Bench", rate_limit=10_000,
                           field_rules=RULES[:args.rules] or None)
        for port in (9, 10):
            integration_create(
                owner=owner, type="WEBHOOK", config={"url": f"http://127.0.0.1:{port}/"}
            )
        client = Client()
        body = {"name": "Ada Lovelace", "email": "ada@example.com", "message": "Hello " * 20}
        counter = iter(range(10**9))

        def submit():
            n = next(counter)
            response = client.post(
                f"/api/v1/f/{form.slug}",
                body,
                content_type="application/json",
                REMOTE_ADDR=f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}",
            )
            assert response.status_code == 200, response.content

        queries = []

        def count(execute, sql, params, many, context):
            queries.append(sql)
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            submit()
        cpu = time.process_time()
        result = timed(submit, args.requests)
        cpu_ms = (time.process_time() - cpu) * 1000 / args.requests
        print(f"database: {connection.vendor}, requests: {args.requests}, rules: {args.rules}")
        print(f"queries per submission: {len(queries)}")
        print(f"median {result['median_ms']:.2f} ms, p95 {result['p95_ms']:.2f} ms per submission")
        print(f"CPU of this process: {cpu_ms:.3f} ms per submission")


if __name__ == "__main__":
    main()
