#!/usr/bin/env python3
"""Smoke test of a FormFlow installation, over HTTP only. Standard library only.

    python3 scripts/smoke.py check --base-url URL [--mail-log FILE]
        One journey against any running deployment: sign up, verify (the code is read from
        the console email in FILE, or typed in), create a form and a webhook to a receiver
        this script runs, submit, and wait for the signed delivery. The deployment must be
        allowed to call the receiver (see --receiver-url and WEBHOOK_ALLOW_PRIVATE_NETWORKS).

    python3 scripts/smoke.py production --database-url URL --redis-url URL
        A fresh venv from the runtime lock alone (requirements.txt, hashes required), then the
        README's production commands (migrate, gunicorn, celery worker, celery beat), then
        `check` against them, then scripts/hostile.py's suite and slow-client test.

    python3 scripts/smoke.py embedded
        `python3 dev.py start` on the embedded defaults in a temporary DATA_DIR, then `check`
        and scripts/hostile.py, as for production.

Both `production` and `embedded` stop only the processes they started, and exit non-zero when
any leg fails.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import venv
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import hostile  # scripts/hostile.py, beside this file

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "smoke-test passphrase " + secrets.token_hex(4)
MAIL_SEPARATOR = "-" * 79  # Django's console email backend ends every message with it


class SmokeFailed(Exception):
    pass


def say(message: str) -> None:
    print(f"smoke: {message}", flush=True)


# --- HTTP ------------------------------------------------------------------------------------


def call(base: str, method: str, path: str, body=None, token: str | None = None):
    """One JSON request; returns (status, parsed body or None)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, None


def call_chunked(base: str, path: str, body: dict):
    """One JSON post streamed with Transfer-Encoding: chunked (no Content-Length)."""
    raw = json.dumps(body).encode()
    parts = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=15)
    try:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        connection.request("POST", path, body=iter([raw[:7], raw[7:]]), headers=headers)
        response = connection.getresponse()
        status, answer = response.status, response.read()
    finally:
        connection.close()
    try:
        return status, json.loads(answer) if answer else None
    except ValueError:
        return status, None


def expect(step: str, status: int, body, wanted: int) -> dict:
    if status != wanted:
        raise SmokeFailed(f"{step}: expected {wanted}, got {status} {body}")
    say(f"{step}: {status}")
    return body or {}


# --- The webhook receiver ----------------------------------------------------------------------


class Receiver:
    """A local HTTP server that records every webhook it is sent."""

    def __init__(self, bind: str) -> None:
        host, _, port = bind.rpartition(":")
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                received.append((dict(self.headers.items()), self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_args) -> None:
                pass

        self.server = ThreadingHTTPServer((host or "127.0.0.1", int(port or 0)), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def signature_valid(secret: str, headers: dict, body: bytes) -> bool:
    """Standard Webhooks: v1,<base64 HMAC-SHA256 of "id.timestamp.body">."""
    lower = {name.lower(): value for name, value in headers.items()}
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{lower['webhook-id']}.{lower['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    offered = [part.split(",", 1)[1] for part in lower["webhook-signature"].split() if "," in part]
    return any(hmac.compare_digest(expected, sig) for sig in offered)


# --- The journey -----------------------------------------------------------------------------


def code_from_log(path: Path, email: str, timeout: float = 60) -> str:
    """Find the verification code mailed to ``email`` in a console-email log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = path.read_text(errors="replace") if path.exists() else ""
        for message in text.split(MAIL_SEPARATOR):
            if f"To: {email}" in message:
                found = re.search(r"verification code: (\d{6})", message)
                if found:
                    return found.group(1)
        time.sleep(0.5)
    raise SmokeFailed(f"no verification code for {email} appeared in {path} within {timeout}s")


def check(
    base: str, mail_log: Path | None, receiver: Receiver, receiver_url: str | None
) -> tuple[str, str]:
    """Walk the journey; return the new owner's access token and form id."""
    base = base.rstrip("/")
    email = f"smoke-{secrets.token_hex(6)}@example.com"
    credentials = {"email": email, "password": PASSWORD}
    expect("sign up", *call(base, "POST", "/api/auth/signup", credentials), wanted=201)
    if mail_log is not None:
        code = code_from_log(mail_log, email)
    else:
        code = input(f"The code mailed to {email}: ").strip()
    verify = {"email": email, "code": code}
    expect("verify email", *call(base, "POST", "/api/auth/verify-email", verify), wanted=200)
    token = expect("get a token", *call(base, "POST", "/api/auth/token", credentials), wanted=200)
    access = token["accessToken"]
    form = expect(
        "create a form", *call(base, "POST", "/api/v1/forms", {"name": "Smoke"}, access), wanted=201
    )
    hook = {"type": "WEBHOOK", "config": {"url": receiver_url or receiver.url}}
    webhook = expect(
        "create a webhook", *call(base, "POST", "/api/v1/integrations", hook, access), wanted=201
    )
    fields = {"name": "Ada", "message": f"smoke {secrets.token_hex(4)}"}
    expect("submit", *call(base, "POST", f"/api/v1/f/{form['slug']}", fields), wanted=200)
    streamed = {"name": "Grace", "message": f"chunked {secrets.token_hex(4)}"}
    path = f"/api/v1/f/{form['slug']}"
    expect("submit a chunked body", *call_chunked(base, path, streamed), wanted=200)
    wait_until_listed(base, form["_id"], access, streamed)
    delivered = wait_for_delivery(receiver, fields)
    headers, body = delivered
    if not signature_valid(webhook["config"]["signingSecret"], headers, body):
        raise SmokeFailed("the webhook arrived with a signature that does not verify")
    say("signed webhook delivered and verified")
    return access, form["_id"]


def hostile_http(base: str, access: str, form_id: str) -> None:
    """scripts/hostile.py's suite and slow-client test against the running deployment."""
    try:
        hostile.run(base, access, form_id)
        hostile.slow_clients(base, access, form_id)
    except hostile.HostileFailed as error:
        raise SmokeFailed(str(error)) from None


def wait_until_listed(base: str, form_id: str, token: str, fields: dict, timeout: float = 10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = call(base, "GET", f"/api/v1/forms/{form_id}/submissions", token=token)[1]
        if any(row["fields"] == fields for row in (listed or {}).get("data", [])):
            say("chunked submission stored as sent")
            return
        time.sleep(0.25)
    raise SmokeFailed("the chunked submission was not stored as sent")


def wait_for_delivery(receiver: Receiver, fields: dict, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for headers, body in list(receiver.received):
            event = json.loads(body)
            if event.get("type") == "submission.created" and event["data"]["fields"] == fields:
                return headers, body
        time.sleep(0.25)
    raise SmokeFailed(f"no webhook for the submission arrived within {timeout}s")


# --- Starting a deployment -------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(base: str, processes: list[subprocess.Popen], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                raise SmokeFailed(f"{process.args[0]} exited with {process.returncode} at start")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise SmokeFailed(f"{base}/healthz did not answer within {timeout}s")


@contextmanager
def started(command: list, env: dict, log: Path, name: str):
    """Start one process with its output in ``log``; stop it (and only it) afterwards."""
    with log.open("ab") as output:
        say(f"starting {name}")
        process = subprocess.Popen(
            [str(part) for part in command],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # so stopping it can reach its own children, and no others
        )
    try:
        yield process
    finally:
        stop(process, name)


def stop(process: subprocess.Popen, name: str) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    say(f"stopped {name}")


def runtime_venv(folder: Path) -> Path:
    """A fresh venv holding the runtime lock and nothing else."""
    say("installing the runtime lock into a fresh venv")
    venv.EnvBuilder(with_pip=True).create(folder)
    bin_dir = folder / "bin"
    subprocess.run(
        [bin_dir / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--require-hashes", "-r", ROOT / "requirements.txt"],
        check=True,
    )
    return bin_dir


def production_env(args: argparse.Namespace, work: Path, base: str, **extra: str) -> dict:
    """The environment of a production deployment on ``args``' PostgreSQL and Redis, with
    fresh keys, and nothing of this shell's own Django settings."""
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "FIELD_ENCRYPTION_KEYS": base64.urlsafe_b64encode(os.urandom(32)).decode(),
        "BASE_URL": base,
        "DATA_DIR": str(work / "data"),
        **extra,
    }
    for name in ("DEBUG", "DJANGO_SETTINGS_MODULE", "CELERY_BROKER_URL", "EMAIL_HOST"):
        env.pop(name, None)
    return env


def production(args: argparse.Namespace, work: Path) -> None:
    bin_dir = runtime_venv(work / "venv")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = production_env(args, work, base, WEBHOOK_ALLOW_PRIVATE_NETWORKS="true",
                         DELIVERY_RETRY_DELAYS="1,2,5")
    say("migrate")
    subprocess.run([bin_dir / "python", "manage.py", "migrate", "--no-input"], cwd=ROOT,
                   env=env, check=True, stdout=subprocess.DEVNULL)
    logs = work / "logs"
    logs.mkdir()
    commands = {
        "gunicorn": [bin_dir / "gunicorn", "config.asgi:application", "--worker-class",
                     "config.serving.worker.Worker", "--bind", f"127.0.0.1:{port}",
                     "--workers", "2", "--threads", "4"],
        "worker": [bin_dir / "celery", "-A", "config", "worker", "--loglevel", "INFO",
                   "--concurrency", "2"],
        "beat": [bin_dir / "celery", "-A", "config", "beat", "--loglevel", "INFO"],
    }
    with ExitStack() as stack:
        processes = [
            stack.enter_context(started(command, env, logs / f"{name}.log", name))
            for name, command in commands.items()
        ]
        try:
            wait_until_up(base, processes)
            receiver = Receiver("127.0.0.1:0")
            stack.callback(receiver.close)
            hostile_http(base, *check(base, logs / "worker.log", receiver, None))
            for process, name in zip(processes, commands, strict=True):
                if process.poll() is not None:
                    raise SmokeFailed(f"{name} exited with {process.returncode}")
        except SmokeFailed:
            show_logs(logs)
            raise


def embedded(args: argparse.Namespace, work: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "DATA_DIR": str(work / "data"), "BASE_URL": base,
           "WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true", "DELIVERY_RETRY_DELAYS": "1,2,5"}
    for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE",
                 "EMAIL_HOST"):
        env.pop(name, None)
    logs = work / "logs"
    logs.mkdir()
    command = [sys.executable, "dev.py", "start", "--port", str(port)]
    with ExitStack() as stack:
        process = stack.enter_context(started(command, env, logs / "dev.log", "dev.py start"))
        try:
            wait_until_up(base, [process], timeout=600)  # the first start installs .venv
            receiver = Receiver("127.0.0.1:0")
            stack.callback(receiver.close)
            hostile_http(base, *check(base, logs / "dev.log", receiver, None))
            if process.poll() is not None:
                raise SmokeFailed(f"dev.py start exited with {process.returncode}")
        except SmokeFailed:
            show_logs(logs)
            raise


def show_logs(logs: Path) -> None:
    for log in sorted(logs.glob("*.log")):
        print(f"----- last lines of {log.name}", flush=True)
        print("\n".join(log.read_text(errors="replace").splitlines()[-40:]), flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("check", help="one journey against a running deployment")
    one.add_argument("--base-url", required=True)
    one.add_argument("--mail-log", type=Path, help="a log that receives the console email")
    one.add_argument("--receiver-bind", default="127.0.0.1:0",
                     help="host:port for the local webhook receiver")
    one.add_argument("--receiver-url",
                     help="the receiver's address as the deployment reaches it, if not bind")
    prod = commands.add_parser("production", help="fresh venv + gunicorn, worker and beat")
    prod.add_argument("--database-url", required=True)
    prod.add_argument("--redis-url", required=True)
    prod.add_argument("--keep", action="store_true", help="keep the work folder for a look")
    emb = commands.add_parser("embedded", help="dev.py start on the embedded defaults")
    emb.add_argument("--keep", action="store_true", help="keep the work folder for a look")
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            receiver = Receiver(args.receiver_bind)
            try:
                check(args.base_url, args.mail_log, receiver, args.receiver_url)
            finally:
                receiver.close()
        else:
            work = Path(tempfile.mkdtemp(prefix=f"formflow-smoke-{args.command}-"))
            try:
                (production if args.command == "production" else embedded)(args, work)
            finally:
                if args.keep:
                    say(f"work folder kept: {work}")
                else:
                    shutil.rmtree(work, ignore_errors=True)
    except (SmokeFailed, subprocess.CalledProcessError) as error:
        say(f"FAILED: {error}")
        return 1
    say("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
