#!/usr/bin/env python3
"""The operator's view of a production deployment, end to end (.ci/run).

Runs the Procfile's web, worker and beat on the given PostgreSQL and Redis, with mail going to
a local SMTP server, and checks: /readyz answers 200, and /status 200 with every check ok (beat
and the worker seen); a submission's owner notification arrives over SMTP with its subject and
Reply-To; /metrics, read with prometheus_client's parser, counts the submission, its route and
its delivery from every process, and /metrics and /status are a 404 without the token; the
access log carries each request's duration; and once beat is stopped, /status answers 503
``degraded`` with only ``beat`` failing (after its heartbeat's 2 minutes), as ``manage.py
status`` does with exit status 1, while /readyz answers 200 throughout: a stopped beat never
takes a web process out of its load balancer.

    .venv-dev/bin/python scripts/operations_check.py --database-url URL --redis-url URL

Needs aiosmtpd (the development requirements).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from aiosmtpd.controller import Controller
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import stack  # noqa: E402  (scripts/stack.py: starting, probing and stopping the stack)

METRICS_TOKEN = secrets.token_urlsafe(24)
OWNER, PASSWORD = "owner@example.com", secrets.token_urlsafe(18)


class CheckFailed(Exception):
    pass


class Inbox:
    def __init__(self) -> None:
        self.messages: list[str] = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(envelope.content.decode(errors="replace"))
        return "250 OK"


def say(text: str) -> None:
    print(f"operations: {text}", flush=True)


def call(method: str, url: str, body: dict | None = None, token: str | None = None,
         ) -> tuple[int, bytes]:
    return stack.request(method, url, body, token, timeout=10)[:2]


def wait_for(what: str, test, timeout: float, every: float = 1.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = test()
        except OSError as error:
            last = error
        if last is True or (last and not isinstance(last, Exception)):
            return last
        time.sleep(every)
    raise CheckFailed(f"{what}: not within {timeout:g}s (last: {last!r})")


def environment(args: argparse.Namespace, data: Path, port: int, smtp_port: int) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "FIELD_ENCRYPTION_KEYS": base64.urlsafe_b64encode(os.urandom(32)).decode(),
        "DATA_DIR": str(data),
        "BASE_URL": f"http://127.0.0.1:{port}",
        "PORT": str(port),
        "METRICS_TOKEN": METRICS_TOKEN,
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(smtp_port),
        "EMAIL_USE_TLS": "false",
        "DEFAULT_FROM_EMAIL": "FormFlow <forms@example.com>",
        "WEB_CONCURRENCY": "2",
        "WORKER_CONCURRENCY": "1",
        "LOG_LEVEL": "WARNING",
    }
    for name in ("DEBUG", "DJANGO_SETTINGS_MODULE", "CELERY_BROKER_URL",
                 "PROMETHEUS_MULTIPROC_DIR"):
        env.pop(name, None)
    return env


def manage(env: dict, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)


def start(name: str, env: dict, logs: Path, processes: ExitStack) -> subprocess.Popen:
    words = stack.command(name, env, bin_dir=Path(sys.executable).parent)
    return processes.enter_context(stack.started(words, env, logs / f"{name}.log"))


def readiness(base: str) -> tuple[int, dict]:
    status, body = call("GET", f"{base}/readyz")
    return status, json.loads(body)


def installation(base: str) -> tuple[int, dict]:
    status, body = call("GET", f"{base}/status", token=METRICS_TOKEN)
    return status, json.loads(body)


def failing(report: dict) -> list[str]:
    return sorted(name for name, result in report["checks"].items() if not result["ok"])


def samples(base: str) -> dict[tuple[str, tuple], float]:
    """One scrape, parsed as Prometheus parses it: each sample's value by name and labels."""
    status, body = call("GET", f"{base}/metrics", token=METRICS_TOKEN)
    if status != 200:
        raise CheckFailed(f"/metrics: {status} {body[:500]!r}")
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(body.decode())
            for sample in family.samples}


def value(scrape: dict, name: str, **labels: str) -> float:
    return scrape.get((name, tuple(sorted(labels.items()))), 0.0)


def check(base: str, env: dict, inbox: Inbox, processes: dict, logs: Path) -> None:
    wait_for("/healthz", lambda: call("GET", f"{base}/healthz")[0] == 200, 60)
    status, ready = wait_for("/readyz 200", lambda: (lambda r: r if r[0] == 200 else None)(
        readiness(base)), 90)
    say(f"ready: {json.dumps(ready)}")
    status, report = wait_for("/status 200 (beat and the worker seen)", lambda: (
        lambda r: r if r[0] == 200 else None)(installation(base)), 90)
    say(f"status: {json.dumps(report)}")
    if call("GET", f"{base}/status")[0] != 404:
        raise CheckFailed("/status answers without the token")

    status, body = call("POST", f"{base}/api/auth/token", {"email": OWNER, "password": PASSWORD})
    if status != 200:
        raise CheckFailed(f"token: {status} {body!r}")
    token = json.loads(body)["accessToken"]
    status, body = call("POST", f"{base}/api/v1/forms", {"name": "Operations"}, token)
    if status != 201 or json.loads(body)["notifyOwner"] is not True:
        raise CheckFailed(f"form: {status} {body!r}")
    slug = json.loads(body)["slug"]
    status, body = call("POST", f"{base}/api/v1/f/{slug}",
                        {"name": "Ada", "email": "ada@example.com", "message": "Hello"})
    if status != 200:
        raise CheckFailed(f"submission: {status} {body!r}")

    def notified():
        return [m for m in inbox.messages if "Subject: New submission: Operations" in m]

    [message] = wait_for("the owner's notification over SMTP", notified, 60)
    for line in (f"To: {OWNER}", "Reply-To: ada@example.com", "name: Ada", "message: Hello"):
        if line not in message:
            raise CheckFailed(f"the notification lacks {line!r}:\n{message}")
    say("the owner's notification arrived over SMTP")

    check_metrics(base, slug)
    check_access_log(logs / "web.log")
    check_beat_stopped(base, env, processes)


def check_metrics(base: str, slug: str) -> None:
    scrape = samples(base)
    expected = {
        ("formflow_submissions_total", (("outcome", "stored"),)): 1.0,
        ("formflow_deliveries_total", (("kind", "OWNER_EMAIL"), ("outcome", "delivered"))): 1.0,
        ("formflow_http_requests_total",
         (("method", "POST"), ("route", "submit"), ("status", "200"))): 1.0,
        ("formflow_http_request_duration_seconds_count", (("route", "submit"),)): 1.0,
    }
    found = {key: scrape.get(key, 0.0) for key in expected}
    if found != expected:
        raise CheckFailed(f"/metrics: {found} instead of {expected}")
    if any(slug in str(labels) for _name, labels in scrape):
        raise CheckFailed("/metrics names a form's slug in a label")
    for name in ("formflow_beat_last_run_timestamp_seconds",
                 "formflow_worker_last_seen_timestamp_seconds"):
        if abs(value(scrape, name) - time.time()) > 120:
            raise CheckFailed(f"/metrics: {name} is {value(scrape, name)}")
    if not any(name == "formflow_build_info" for name, _labels in scrape):
        raise CheckFailed("/metrics has no formflow_build_info")
    if call("GET", f"{base}/metrics")[0] != 404:
        raise CheckFailed("/metrics answers without the token")
    say("/metrics counts the submission, its route and its delivery from every process")


def check_access_log(log: Path) -> None:
    timed = re.compile(r'"POST /api/v1/f/\S+ HTTP/1\.1" 200 \d+\.\d{3}s')
    if not timed.search(log.read_text(errors="replace")):
        raise CheckFailed("the access log has no duration on the submission's line")
    say("the access log carries each request's duration")


def check_beat_stopped(base: str, env: dict, processes: dict) -> None:
    stack.stop(processes["beat"], timeout=20)
    say("beat stopped; waiting for its heartbeat to age past 2 minutes")

    def degraded():
        ready_status, _ = readiness(base)
        if ready_status != 200:
            raise CheckFailed(f"/readyz answered {ready_status} with beat stopped")
        status, body = installation(base)
        return (status, body) if status == 503 else None

    _status, body = wait_for("/status 503 once beat stopped", degraded, 200, every=5)
    if failing(body) != ["beat"] or body["status"] != "degraded":
        raise CheckFailed(f"/status with beat stopped: {json.dumps(body)}")
    done = manage(env, "status")
    if done.returncode != 1 or failing(json.loads(done.stdout)) != ["beat"]:
        raise CheckFailed(f"manage.py status with beat stopped: {done.returncode} {done.stdout}")
    say(f"with beat stopped: /readyz 200, /status 503 {json.dumps(body)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--port", type=int, default=0, help="the web port (default: any free)")
    args = parser.parse_args()
    inbox = Inbox()
    smtp = Controller(inbox, hostname="127.0.0.1", port=stack.free_port())
    smtp.start()
    port = args.port or stack.free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="formflow-operations-") as folder:
        work = Path(folder)
        logs = work / "logs"
        logs.mkdir()
        env = environment(args, work / "data", port, smtp.port)
        processes: dict[str, subprocess.Popen] = {}
        running = ExitStack()
        try:
            for step in (["migrate", "--no-input"],):
                done = manage(env, *step)
                if done.returncode:
                    raise CheckFailed(f"migrate: {done.stderr}")
            done = manage(env, "createuser", "--email", OWNER, "--password-stdin",
                          stdin=PASSWORD + "\n")
            if done.returncode:
                raise CheckFailed(f"createuser: {done.stderr}")
            for name in ("web", "worker", "beat"):
                processes[name] = start(name, env, logs, running)
            check(base, env, inbox, processes, logs)
        except CheckFailed as error:
            for log in sorted(logs.glob("*.log")):
                print(f"----- {log.name}\n{log.read_text(errors='replace')[-4000:]}")
            print(f"operations: FAILED: {error}", file=sys.stderr)
            return 1
        finally:
            running.close()
            smtp.stop()
    say("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
