"""CPU per public submission against the floor, in one process: a few per cent on a busy machine.

    .venv/bin/python bench/intake_cpu.py [--requests 50] [--blocks 40]
    DATABASE_URL=postgres://... REDIS_URL=redis://... .venv/bin/python bench/intake_cpu.py

FormFlow's endpoint and the floor's view (bench/floor_urls.py: parse the JSON, insert one row)
are posted to alternately, in blocks of --requests, through Django's whole stack against a
throwaway database, with one webhook (its deliveries queued, never sent). Each block is timed
in process CPU time, so waiting for a core does not count, and contention, which only ever
adds, is left out by taking the mean of the five cheapest blocks of each. Prints both and
their ratio (floor / FormFlow, as bench/load.py's). Compare two builds by running each.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from _setup import scratch_database

CHEAPEST = 5


def cpu_ms(post: Callable[[], None], requests: int) -> float:
    started = time.process_time()
    for _ in range(requests):
        post()
    return (time.process_time() - started) * 1000 / requests


def cheapest(blocks: list[float]) -> float:
    low = sorted(blocks)[:CHEAPEST]
    return round(sum(low) / len(low), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--blocks", type=int, default=40)
    args = parser.parse_args()

    with scratch_database():
        from django.conf import settings
        from django.db import connection
        from django.test import Client, override_settings

        from accounts.models import User
        from bench import floor_settings
        from forms_app.services import form_create
        from integrations.services import integration_create

        settings.CELERY_TASK_ALWAYS_EAGER = False
        settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
        owner = User.objects.create_user("bench@example.com", "bench-password",
                                         is_verified=True, monthly_submission_limit=10**9)
        form = form_create(owner=owner, name="Bench", rate_limit=10_000)
        integration_create(owner=owner, type="WEBHOOK", config={"url": "http://127.0.0.1:9/"})
        with connection.cursor() as cursor:  # as bench/load.py makes the floor's table
            cursor.execute(
                "CREATE TABLE bench_floor (id serial PRIMARY KEY, data text)"
                if connection.vendor == "postgresql"
                else "CREATE TABLE bench_floor (id integer PRIMARY KEY AUTOINCREMENT, data text)")
        body = {"name": "Ada Lovelace", "email": "ada@example.com",
                "message": "Hello there! " * 10}
        counter = iter(range(10**9))
        formflow_client, floor_client = Client(), Client()

        def formflow() -> None:
            n = next(counter)
            response = formflow_client.post(
                f"/api/v1/f/{form.slug}", body, content_type="application/json",
                REMOTE_ADDR=f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}")
            assert response.status_code == 200, response.content

        def floor() -> None:
            response = floor_client.post("/api/v1/f/floor", body, content_type="application/json")
            assert response.status_code == 200, response.content

        blocks: dict[str, list[float]] = {"formflow": [], "floor": []}
        for _ in range(args.blocks):
            blocks["formflow"].append(cpu_ms(formflow, args.requests))
            with override_settings(ROOT_URLCONF=floor_settings.ROOT_URLCONF,
                                   MIDDLEWARE=floor_settings.MIDDLEWARE):
                floor_client.handler.load_middleware()
                blocks["floor"].append(cpu_ms(floor, args.requests))
        ours, floor_ms = cheapest(blocks["formflow"]), cheapest(blocks["floor"])
        print(f"database: {connection.vendor}, {args.blocks} blocks of {args.requests}")
        print(f"formflow {ours} ms CPU per submission, floor {floor_ms} ms, "
              f"ratio {floor_ms / ours:.3f}")


if __name__ == "__main__":
    main()
