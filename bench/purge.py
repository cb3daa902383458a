"""The retention purge under live traffic: does deleting 100,000 expired submissions stall
the submissions arriving meanwhile?

    python3 bench/purge.py [--rows 100000] [--rate 100]

The production setup of bench/load.py (PostgreSQL + Redis, gunicorn 2 x 4 threads, a Celery
worker, a local webhook receiver). One form with retentionDays 7 holds --rows submissions 10
days old, each with a delivered webhook and its attempt, seeded in SQL and ANALYZEd. An
open-loop client posts --rate submissions a second to the same form (latency counted from each
request's schedule, so a stall cannot hide behind a slow answer) for a few seconds alone, then
while `manage.py purge` runs, then a moment after. It prints the purge's rows per second, the
latency of the submissions before and during the purge, and the longest stall: the slowest
submission while the purge ran.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load
import stack  # scripts/stack.py, on the path load.py set

SEED = """
INSERT INTO submissions_submission (id, form_id, data, ip, user_agent, origin, status,
                                    submitted_at)
SELECT gen_random_uuid(), f.id, ('[["name", "Old"], ["n", "' || n || '"]]')::jsonb,
       '203.0.113.5', 'bench', '', 'inbox', now() - interval '10 days' - n * interval '1 ms'
FROM forms_app_form f, generate_series(1, {rows}) AS n;
INSERT INTO integrations_delivery (id, integration_id, submission_id, event_type, state,
                                   attempts, next_attempt_at, created_at, finished_at)
SELECT gen_random_uuid(), i.id, s.id, 'submission.created', 'delivered', 1, s.submitted_at,
       s.submitted_at, s.submitted_at
FROM submissions_submission s JOIN integrations_integration i ON true;
INSERT INTO integrations_deliveryattempt (delivery_id, number, started_at, duration_ms,
                                          succeeded, status_code)
SELECT d.id, 1, d.created_at, 12, true, 200 FROM integrations_delivery d;
UPDATE forms_app_form SET retention_days = 7;
ANALYZE;
"""


async def traffic(base: str, paths: list[str], rate: float, purge_command: list[str],
                  env: dict, before: float, after: float) -> dict:
    """Submissions at ``rate`` throughout; the purge starts ``before`` seconds in."""
    host, port = base.removeprefix("http://").split(":")
    samples: list[tuple[float, float, int]] = []  # (due, latency, status)
    stop = asyncio.Event()

    async def one(index: int, due: float) -> None:
        try:
            reader, writer = await asyncio.open_connection(host, int(port))
            status = await load.submit_one(reader, writer, host, paths, index)
            writer.close()
        except (OSError, asyncio.IncompleteReadError):
            status = 0
        samples.append((due, time.monotonic() - due, status))

    async def send() -> None:
        start, tasks, index = time.monotonic(), [], 0
        while not stop.is_set():
            due = start + index / rate
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            tasks.append(asyncio.create_task(one(index, due)))
            index += 1
        await asyncio.gather(*tasks)

    sender = asyncio.create_task(send())
    await asyncio.sleep(before)
    began = time.monotonic()
    purge = await asyncio.create_subprocess_exec(
        *purge_command, cwd=load.ROOT, env=env, stdout=asyncio.subprocess.PIPE
    )
    output, _ = await purge.communicate()
    ended = time.monotonic()
    await asyncio.sleep(after)
    stop.set()
    await sender
    return {"began": began, "ended": ended, "samples": samples, "output": output.decode()}


def summary(latencies: list[float]) -> dict:
    latencies = sorted(latencies)
    if not latencies:
        return {"count": 0}
    return {
        "count": len(latencies),
        "p50_ms": round(latencies[len(latencies) // 2] * 1000, 1),
        "p99_ms": round(latencies[max(0, int(len(latencies) * 0.99) - 1)] * 1000, 1),
        "max_ms": round(latencies[-1] * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rate", type=float, default=100.0)
    args = argparse.Namespace(setup="production", accounts=1, server="edge",
                              **vars(parser.parse_args()))
    work = Path(tempfile.mkdtemp(prefix="formflow-purge-"))
    hook_port, port = stack.free_port(), stack.free_port()
    base = f"http://127.0.0.1:{port}"
    env, slugs = load.prepare(args, work, hook_port)
    paths = [f"/api/v1/f/{slug}" for slug in slugs]
    seeded = time.monotonic()
    load.sql(env, SEED.format(rows=args.rows))
    seed_seconds = time.monotonic() - seeded
    service = load.servers(args, env, port, None)
    service["commands"].pop("beat")  # the purge runs when this script says
    with ExitStack() as running:
        receiver = [sys.executable, load.ROOT / "bench" / "receiver.py", hook_port]
        running.enter_context(stack.started(receiver, env, work / "receiver.log"))
        for name, command in service["commands"].items():
            running.enter_context(stack.started(command, service["env"], work / f"{name}.log"))
        stack.wait_for_answer(base + "/healthz")
        time.sleep(2)
        purge_command = [str(load.VENV_BIN / "python"), "manage.py", "purge"]
        run = asyncio.run(traffic(base, paths, args.rate, purge_command, env, 5.0, 2.0))
        load.drain(env, hook_port)
    during = [lat for due, lat, _ in run["samples"] if run["began"] <= due <= run["ended"]]
    before = [lat for due, lat, _ in run["samples"] if due < run["began"]]
    statuses: dict[int, int] = {}
    for _, _, status in run["samples"]:
        statuses[status] = statuses.get(status, 0) + 1
    seconds = run["ended"] - run["began"]
    stored = int(load.manage(env, "shell", "-c", load.COUNTS).split()[-2])
    report = {
        "rows": args.rows,
        "seed_seconds": round(seed_seconds, 1),
        "purge": {
            "seconds": round(seconds, 2),
            "rows_per_second": round(args.rows / seconds),
            "output": run["output"].strip().splitlines(),
        },
        "submissions_before_purge": summary(before),
        "submissions_during_purge": summary(during),
        "longest_stall_ms": summary(during).get("max_ms"),
        "statuses": statuses,
        "left_after_purge": stored,
        "sent_during_run": len(run["samples"]),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
