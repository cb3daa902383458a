#!/usr/bin/env python3
"""Smoke test of a FormFlow installation, over HTTP only. Standard library only.

    python3 scripts/smoke.py check --base-url URL [--mail-log FILE] [--cacert FILE]
        One journey against any running deployment: sign up, verify (the code is read from
        the console email in FILE, or typed in), create a form and a webhook to a receiver
        this script runs, submit, and wait for the signed delivery. The deployment must be
        allowed to call the receiver (see --receiver-url and WEBHOOK_ALLOW_PRIVATE_NETWORKS).
        --record FILE keeps the account and what was submitted; --read-back FILE, instead of
        the journey, signs in as that account and finds every recorded submission (a restored
        backup's check).

    python3 scripts/smoke.py production --database-url URL --redis-url URL [--venv DIR]
                                        [--behind-caddy] [--record FILE]
        A fresh venv from the runtime lock alone (requirements.txt, hashes required; or the
        venv DIR, made from it by `dev.py install`), then migrate and the Procfile's web,
        worker and beat, then `check` against them, then scripts/hostile.py's suite and
        slow-client test. --behind-caddy puts deploy/Caddyfile in front (HTTPS from Caddy's
        own CA, TRUSTED_PROXY_COUNT=1) and checks through it the client address, BASE_URL and
        secure cookies instead of hostile.py's raw-socket suite.

    python3 scripts/smoke.py container --image NAME --database-url URL --redis-url URL
        The image's migrate, web, worker and beat under podman on the host's network, then
        `check` against them.

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
import ipaddress
import json
import os
import re
import secrets
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import venv
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import hostile  # scripts/hostile.py, beside this file
import stack  # scripts/stack.py: the Procfile's command lines, starting and stopping them

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "smoke-test passphrase " + secrets.token_hex(4)
MAIL_SEPARATOR = "-" * 79  # Django's console email backend ends every message with it


SmokeFailed = stack.StackFailed
# A client address no one has; sent as X-Forwarded-For through the proxy, which must replace it.
SPOOFED_ADDRESS = "203.0.113.77"
TLS: ssl.SSLContext | None = None  # trusts the proxy's CA, when --cacert is given


def say(message: str) -> None:
    print(f"smoke: {message}", flush=True)


# --- HTTP ------------------------------------------------------------------------------------


def request(base: str, method: str, path: str, body=None, token: str | None = None,
            headers: dict | None = None):
    """One JSON request; returns (status, parsed body or None, response headers)."""
    status, raw, got = stack.request(method, base + path, body, token, headers, context=TLS)
    try:
        return status, json.loads(raw) if raw else None, got
    except ValueError:
        return status, None, got


def call(base: str, method: str, path: str, body=None, token: str | None = None,
         headers: dict | None = None):
    """One JSON request; returns (status, parsed body or None)."""
    return request(base, method, path, body, token, headers)[:2]


def call_chunked(base: str, path: str, body: dict):
    """One JSON post streamed with Transfer-Encoding: chunked (no Content-Length)."""
    raw = json.dumps(body).encode()
    parts = urllib.parse.urlsplit(base)
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=15,
                                                 context=TLS)
    else:
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
    base: str, mail_log: Path | None, receiver: Receiver, receiver_url: str | None,
    base_url: str | None = None, behind_proxy: bool = False, record: Path | None = None,
) -> tuple[str, str]:
    """Walk the journey; return the new owner's access token and form id. ``base_url``: the
    BASE_URL the deployment must put in form endpoints. ``behind_proxy``: prove the proxy
    setup (secure cookies, the client address through X-Forwarded-For)."""
    base = base.rstrip("/")
    email = f"smoke-{secrets.token_hex(6)}@example.com"
    credentials = {"email": email, "password": PASSWORD}
    expect("sign up", *call(base, "POST", "/api/auth/signup", credentials), wanted=201)
    if mail_log is not None:
        code = code_from_log(mail_log, email)
    else:
        code = input(f"The code mailed to {email}: ").strip()
    verify = {"email": email, "code": code}
    status, body, headers = request(base, "POST", "/api/auth/verify-email", verify)
    expect("verify email", status, body, wanted=200)
    if behind_proxy:
        secure_cookie(headers)  # verifying signs the browser in
    token = expect("get a token", *call(base, "POST", "/api/auth/token", credentials), wanted=200)
    access = token["accessToken"]
    form = expect(
        "create a form", *call(base, "POST", "/api/v1/forms", {"name": "Smoke"}, access), wanted=201
    )
    if base_url is not None:
        endpoint_on(form, base_url)
    hook = {"type": "WEBHOOK", "config": {"url": receiver_url or receiver.url}}
    webhook = expect(
        "create a webhook", *call(base, "POST", "/api/v1/integrations", hook, access), wanted=201
    )
    fields = {"name": "Ada", "message": f"smoke {secrets.token_hex(4)}"}
    spoof = {"X-Forwarded-For": SPOOFED_ADDRESS} if behind_proxy else None
    path = f"/api/v1/f/{form['slug']}"
    expect("submit", *call(base, "POST", path, fields, headers=spoof), wanted=200)
    streamed = {"name": "Grace", "message": f"chunked {secrets.token_hex(4)}"}
    expect("submit a chunked body", *call_chunked(base, path, streamed), wanted=200)
    rows = wait_until_listed(base, form["_id"], access, streamed)
    if behind_proxy:
        client_address(rows, fields)
    delivered = wait_for_delivery(receiver, fields)
    headers, body = delivered
    if not signature_valid(webhook["config"]["signingSecret"], headers, body):
        raise SmokeFailed("the webhook arrived with a signature that does not verify")
    say("signed webhook delivered and verified")
    if record is not None:
        record.write_text(json.dumps({
            "email": email, "password": PASSWORD, "form": form["_id"],
            "submitted": [fields, streamed],
            "signingSecret": webhook["config"]["signingSecret"]}))
        record.chmod(0o600)
    return access, form["_id"]


def secure_cookie(headers) -> None:
    cookies = headers.get_all("Set-Cookie") or []
    token = [cookie for cookie in cookies if cookie.startswith("ff_token=")]
    if not token or "secure" not in token[0].lower().split("; "):
        raise SmokeFailed(f"behind the proxy the session cookie must be Secure: {cookies}")
    say("session cookie is Secure behind the proxy")


def endpoint_on(form: dict, base_url: str) -> None:
    wanted = f"{base_url.rstrip('/')}/api/v1/f/{form['slug']}"
    if form.get("endpoint") != wanted:
        raise SmokeFailed(f"the form's endpoint is {form.get('endpoint')}, not {wanted}")
    say(f"form endpoint is on BASE_URL ({base_url})")


def client_address(rows: list[dict], fields: dict) -> None:
    """The submission sent with a forged X-Forwarded-For is recorded with the address the
    proxy saw (this machine), never the forged one."""
    row = next(row for row in rows if row["fields"] == fields)
    ip = (row.get("meta") or {}).get("ip") or ""
    try:
        loopback = ipaddress.ip_address(ip).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise SmokeFailed(f"the client address recorded behind the proxy is {ip!r}, not the "
                          f"client's own (loopback); {SPOOFED_ADDRESS} was forged")
    say(f"client address through the proxy: {ip} (the forged {SPOOFED_ADDRESS} ignored)")


def read_back(base: str, record: Path) -> None:
    """Sign in as the recorded account and find every recorded submission, decrypted, and
    download every recorded file."""
    kept = json.loads(record.read_text())
    base = base.rstrip("/")
    rows = listed(base, kept["form"], signed_in(base, kept))
    missing = [fields for fields in kept["submitted"]
               if not any(row["fields"] == fields for row in rows)]
    if missing:
        raise SmokeFailed(f"not read back: {missing}")
    say(f"read back all {len(kept['submitted'])} recorded submissions")
    files_read_back(rows, kept)
def add_file(base: str, record: Path) -> None:
    """Turn file uploads on for the recorded form and submit a file to it; the record keeps
    the file's bytes, so a restored backup's read-back can compare them."""
    kept = json.loads(record.read_text())
    token = signed_in(base, kept)
    uploads = {"fileUploads": {"maxBytes": 65536, "maxFiles": 1, "types": ["application/pdf"]}}
    form = expect("turn file uploads on", *call(base, "PATCH", f"/api/v1/forms/{kept['form']}",
                                                uploads, token), wanted=200)
    data = b"%PDF-1.7\n" + secrets.token_bytes(4096)
    fields = {"name": "Lin", "message": f"with a file {secrets.token_hex(4)}"}
    expect("submit a file", *post_multipart(base, f"/api/v1/f/{form['slug']}", fields,
                                            ("cv", "cv.pdf", data)), wanted=200)
    fields["cv"] = f"[File: cv.pdf, {len(data)} bytes]"
    kept["submitted"].append(fields)
    kept["files"] = {"cv.pdf": base64.b64encode(data).decode()}
    record.write_text(json.dumps(kept))


def post_multipart(base: str, path: str, fields: dict, file: tuple[str, str, bytes]):
    """One multipart/form-data post with ``fields`` and one file (field, name, bytes)."""
    boundary = secrets.token_hex(12)
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
             f"{value}\r\n".encode() for name, value in fields.items()]
    field, name, data = file
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; '
                 f'filename="{name}"\r\nContent-Type: application/pdf\r\n\r\n'.encode()
                 + data + f"\r\n--{boundary}--\r\n".encode())
    prepared = urllib.request.Request(
        base.rstrip("/") + path, data=b"".join(parts), method="POST",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}",
                 "Accept": "application/json"})
    try:
        with urllib.request.urlopen(prepared, timeout=15, context=TLS) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def signed_in(base: str, kept: dict) -> str:
    credentials = {"email": kept["email"], "password": kept["password"]}
    token = expect("sign in", *call(base, "POST", "/api/auth/token", credentials), wanted=200)
    return token["accessToken"]


def files_read_back(rows: list[dict], kept: dict) -> None:
    """Each recorded file downloads, byte for byte, from its submission's signed link."""
    links = {file["name"]: file["url"] for row in rows for file in row.get("files") or []}
    for name, encoded in kept.get("files", {}).items():
        if name not in links:
            raise SmokeFailed(f"the file {name} is not listed with its submission")
        with urllib.request.urlopen(links[name], timeout=15, context=TLS) as response:
            got = response.read()
        if got != base64.b64decode(encoded):
            raise SmokeFailed(f"the file {name} downloads as other bytes ({len(got)} bytes)")
        say(f"the file {name} downloads byte for byte ({len(got)} bytes)")


def hostile_http(base: str, access: str, form_id: str) -> None:
    """scripts/hostile.py's suite and slow-client test against the running deployment."""
    try:
        hostile.run(base, access, form_id)
        hostile.slow_clients(base, access, form_id)
    except hostile.HostileFailed as error:
        raise SmokeFailed(str(error)) from None


def listed(base: str, form_id: str, token: str) -> list[dict]:
    status, body = call(base, "GET", f"/api/v1/forms/{form_id}/submissions", token=token)
    return (body or {}).get("data", []) if status == 200 else []


def wait_until_listed(base: str, form_id: str, token: str, fields: dict,
                      timeout: float = 10) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = listed(base, form_id, token)
        if any(row["fields"] == fields for row in rows):
            say("chunked submission stored as sent")
            return rows
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
    the keys of this environment (SECRET_KEY, FIELD_ENCRYPTION_KEYS) or fresh ones, and
    nothing of this shell's own Django settings."""
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50),
        "FIELD_ENCRYPTION_KEYS": os.environ.get("FIELD_ENCRYPTION_KEYS")
        or base64.urlsafe_b64encode(os.urandom(32)).decode(),
        "BASE_URL": base,
        "DATA_DIR": str(work / "data"),
        **extra,
    }
    for name in ("DEBUG", "DJANGO_SETTINGS_MODULE", "CELERY_BROKER_URL", "EMAIL_HOST"):
        env.pop(name, None)
    return env


# Quick retries, so the smoke's webhook is delivered in seconds; the receiver is on loopback.
SMOKE_SETTINGS = {"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true", "DELIVERY_RETRY_DELAYS": "1,2,5"}
PROCESSES = ("web", "worker", "beat")
# Behind the proxy, BASE_URL is https and plain http is redirected: a probe of the web
# server itself says it came through the proxy over https.
VIA_PROXY = {"X-Forwarded-Proto": "https"}


def production(args: argparse.Namespace, work: Path) -> None:
    bin_dir = Path(args.venv).resolve() / "bin" if args.venv else runtime_venv(work / "venv")
    port = stack.free_port()
    local = f"http://127.0.0.1:{port}"
    extra = {**SMOKE_SETTINGS, "PORT": str(port)}
    base = local
    if args.behind_caddy:
        https_port = stack.free_port()
        base = f"https://localhost:{https_port}"
        extra.update(TRUSTED_PROXY_COUNT="1", ALLOWED_HOSTS="localhost,127.0.0.1")
    env = production_env(args, work, base, **extra)
    say("migrate")
    subprocess.run([bin_dir / "python", "manage.py", "migrate", "--no-input"], cwd=ROOT,
                   env=env, check=True, stdout=subprocess.DEVNULL)
    commands = {name: stack.command(name, env, bin_dir) for name in PROCESSES}
    with ExitStack() as stack_:
        if args.behind_caddy:
            caddy(stack_, work, port, https_port)
        serve_and_check(stack_, commands, env, work / "logs", local, base,
                        behind_proxy=args.behind_caddy, record=args.record,
                        hostile_suite=not args.behind_caddy,  # raw sockets, plain HTTP
                        probe_headers=VIA_PROXY if args.behind_caddy else None)


def caddy(stack_: ExitStack, work: Path, upstream: int | str, https_port: int) -> None:
    """deploy/Caddyfile on loopback: ``tls internal`` (Caddy's own CA, which TLS then
    trusts), on spare ports, with no admin endpoint and nothing installed in the system.
    ``upstream``: a port on loopback, or the web processes' ``host:port`` list (several
    machines, balanced)."""
    global TLS
    config = work / "Caddyfile"
    config.write_text(CADDY_CI.format(http=stack.free_port(), https=https_port,
                                      caddyfile=ROOT / "deploy" / "Caddyfile"))
    env = {**os.environ, "XDG_DATA_HOME": str(work / "caddy-data"),
           "XDG_CONFIG_HOME": str(work / "caddy-config"),
           "FORMFLOW_SITE": f"localhost:{https_port}", "FORMFLOW_TLS": "tls internal",
           "FORMFLOW_UPSTREAM": upstream if isinstance(upstream, str)
           else f"127.0.0.1:{upstream}"}
    (work / "logs").mkdir(exist_ok=True)
    process = stack_.enter_context(stack.started(
        ["caddy", "run", "--config", config, "--adapter", "caddyfile"], env,
        work / "logs" / "caddy.log", "caddy"))
    root = work / "caddy-data" / "caddy" / "pki" / "authorities" / "local" / "root.crt"
    deadline = time.monotonic() + 30
    while not root.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            show_logs(work / "logs")
            raise SmokeFailed("caddy did not start (or made no CA)")
        time.sleep(0.2)
    TLS = ssl.create_default_context(cafile=str(root))


CADDY_CI = """{{
	admin off
	skip_install_trust
	http_port {http}
	https_port {https}
}}
import {caddyfile}
"""


def container(args: argparse.Namespace, work: Path) -> None:
    """The image's processes under podman, on the host's network and its services."""
    port = stack.free_port()
    base = f"http://127.0.0.1:{port}"
    env = production_env(args, work, base, **SMOKE_SETTINGS, PORT=str(port))
    passed = ["DATABASE_URL", "REDIS_URL", "SECRET_KEY", "FIELD_ENCRYPTION_KEYS", "BASE_URL",
              "PORT", *SMOKE_SETTINGS]
    tag = secrets.token_hex(3)

    def podman(name: str, *arguments: str) -> list[str]:
        options = [f"--env={variable}" for variable in passed]
        return ["podman", "run", "--rm", "--init", "--network=host", f"--name=ff-{name}-{tag}",
                *options, *arguments]

    say("migrate (in the image)")
    subprocess.run(podman("migrate", "--entrypoint=python", args.image, "manage.py", "migrate",
                          "--no-input"), env=env, check=True, stdout=subprocess.DEVNULL)
    commands = {name: podman(name, args.image, name) for name in PROCESSES}
    with ExitStack() as stack_:
        for name in PROCESSES:  # whatever the signal did not stop
            stack_.callback(subprocess.run, ["podman", "rm", "--force", "--ignore",
                                             f"ff-{name}-{tag}"], stdout=subprocess.DEVNULL)
        serve_and_check(stack_, commands, env, work / "logs", base, base, hostile_suite=False)


def embedded(args: argparse.Namespace, work: Path) -> None:
    port = stack.free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "DATA_DIR": str(work / "data"), **SMOKE_SETTINGS}
    for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE",
                 "EMAIL_HOST", "BASE_URL"):
        env.pop(name, None)
    command = [sys.executable, "dev.py", "start", "--port", str(port)]
    with ExitStack() as stack_:
        # The first start installs .venv. BASE_URL is left to dev.py: it follows the port.
        serve_and_check(stack_, {"dev": command}, env, work / "logs", base, base,
                        mail_log="dev.log", base_url=f"http://localhost:{port}", up_timeout=600)


def serve_and_check(
    stack_: ExitStack, commands: dict[str, list], env: dict, logs: Path, local: str,
    base: str, *, mail_log: str = "worker.log", base_url: str | None = None,
    behind_proxy: bool = False, record: Path | None = None, hostile_suite: bool = True,
    probe_headers: dict | None = None, up_timeout: float = 120,
) -> None:
    """Start ``commands``, wait until the web server answers at ``local`` and the service is
    ready at ``base``, walk the journey there (and hostile.py's suite), then check that every
    process still runs."""
    logs.mkdir(exist_ok=True)
    processes = [stack_.enter_context(stack.started(words, env, logs / f"{name}.log", name))
                 for name, words in commands.items()]
    try:
        stack.wait_until_up(local, processes, up_timeout, headers=probe_headers)
        path = stack.wait_until_ready(base, processes, context=TLS)
        say(f"{base}{path} says ready")
        receiver = Receiver("127.0.0.1:0")
        stack_.callback(receiver.close)
        access, form_id = check(base, logs / mail_log, receiver, None,
                                base_url=base_url or env.get("BASE_URL"),
                                behind_proxy=behind_proxy, record=record)
        if hostile_suite:
            hostile_http(base, access, form_id)
        for process, name in zip(processes, commands, strict=True):
            if process.poll() is not None:
                raise SmokeFailed(f"{name} exited with {process.returncode}")
    except SmokeFailed:
        show_logs(logs)
        raise


def show_logs(logs: Path) -> None:
    for log in sorted(logs.glob("*.log")):
        print(f"----- last lines of {log.name}", flush=True)
        print("\n".join(log.read_text(errors="replace").splitlines()[-40:]), flush=True)


def main(argv: list[str]) -> int:
    global TLS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("check", help="one journey against a running deployment")
    one.add_argument("--base-url", required=True)
    one.add_argument("--mail-log", type=Path, help="a log that receives the console email")
    one.add_argument("--receiver-bind", default="127.0.0.1:0",
                     help="host:port for the local webhook receiver")
    one.add_argument("--receiver-url",
                     help="the receiver's address as the deployment reaches it, if not bind")
    one.add_argument("--cacert", type=Path, help="the CA that signed the deployment's TLS")
    one.add_argument("--record", type=Path, help="keep the account and submissions here")
    one.add_argument("--read-back", type=Path, metavar="RECORD",
                     help="only sign in as RECORD's account and find its submissions")
    prod = commands.add_parser("production", help="the Procfile's web, worker and beat")
    prod.add_argument("--database-url", required=True)
    prod.add_argument("--redis-url", required=True)
    prod.add_argument("--venv", help="a venv made from requirements.txt (else a fresh one)")
    prod.add_argument("--behind-caddy", action="store_true",
                      help="deploy/Caddyfile in front, over HTTPS")
    prod.add_argument("--record", type=Path, help="keep the account and submissions here")
    prod.add_argument("--keep", action="store_true", help="keep the work folder for a look")
    box = commands.add_parser("container", help="the image's web, worker and beat (podman)")
    box.add_argument("--image", required=True)
    box.add_argument("--database-url", required=True)
    box.add_argument("--redis-url", required=True)
    box.add_argument("--keep", action="store_true", help="keep the work folder for a look")
    emb = commands.add_parser("embedded", help="dev.py start on the embedded defaults")
    emb.add_argument("--keep", action="store_true", help="keep the work folder for a look")
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            if args.cacert:
                TLS = ssl.create_default_context(cafile=str(args.cacert))
            if args.read_back:
                read_back(args.base_url, args.read_back)
            else:
                receiver = Receiver(args.receiver_bind)
                try:
                    check(args.base_url, args.mail_log, receiver, args.receiver_url,
                          record=args.record)
                finally:
                    receiver.close()
        else:
            work = Path(tempfile.mkdtemp(prefix=f"formflow-smoke-{args.command}-"))
            try:
                {"production": production, "container": container,
                 "embedded": embedded}[args.command](args, work)
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
