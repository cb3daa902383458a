#!/usr/bin/env python3
"""The operator's view of a production deployment, end to end (.ci/run).

Runs the Procfile's web, worker and beat on the given PostgreSQL and Redis, with mail going to
a local SMTP server, and checks: /readyz answers 200 with every check ok; a submission's owner
notification arrives over SMTP with its subject and Reply-To; /metrics answers its bearer and
counts the submission, and is a 404 without the token; and once beat is stopped, /readyz
answers 503 with only ``beat`` failing (after its heartbeat's 2 minutes), as
``manage.py status`` does with exit status 1.

    .venv-dev/bin/python scripts/operations_check.py --database-url URL --redis-url URL

Needs aiosmtpd (the development requirements).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from aiosmtpd.controller import Controller

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


def check(base: str, env: dict, inbox: Inbox, processes: dict) -> None:
    wait_for("/healthz", lambda: call("GET", f"{base}/healthz")[0] == 200, 60)
    status, ready = wait_for("/readyz 200", lambda: (lambda r: r if r[0] == 200 else None)(
        readiness(base)), 90)
    say(f"ready: {json.dumps(ready)}")

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

    status, body = call("GET", f"{base}/metrics", token=METRICS_TOKEN)
    text = body.decode()
    if status != 200 or 'formflow_submissions_total{outcome="inbox"} 1.0' not in text:
        raise CheckFailed(f"/metrics: {status}\n{text[:2000]}")
    if 'formflow_deliveries_total{kind="OWNER_EMAIL",outcome="delivered"} 1.0' not in text:
        raise CheckFailed(f"/metrics counts no delivered owner email:\n{text[:3000]}")
    if call("GET", f"{base}/metrics")[0] != 404:
        raise CheckFailed("/metrics answers without the token")
    say("/metrics counts the submission and its delivery from every process")

    stack.stop(processes["beat"], timeout=20)
    say("beat stopped; waiting for its heartbeat to age past 2 minutes")

    def unavailable():
        status, body = readiness(base)
        return (status, body) if status == 503 else None

    status, body = wait_for("/readyz 503 once beat stopped", unavailable, 200, every=5)
    failing = sorted(name for name, result in body["checks"].items() if not result["ok"])
    if failing != ["beat"] or body["status"] != "unavailable":
        raise CheckFailed(f"/readyz with beat stopped: {json.dumps(body)}")
    done = manage(env, "status")
    if done.returncode != 1 or json.loads(done.stdout)["checks"]["beat"]["ok"] is not False:
        raise CheckFailed(f"manage.py status with beat stopped: {done.returncode} {done.stdout}")
    say(f"with beat stopped: 503 {json.dumps(body)}")


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
            check(base, env, inbox, processes)
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
