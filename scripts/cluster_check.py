#!/usr/bin/env python3
"""Three hosts on this one machine, a flood, one host killed: nothing lost or repeated.

    python3 scripts/cluster_check.py [--postgres postgres://postgres@127.0.0.1:5432]
        [--database formflow_cluster] [--redis-url redis://127.0.0.1:6379/9] [--disk-storage]
        [--keep]

Host A is this machine's own side of a bridge: its PostgreSQL and Redis (reached by the other
hosts through a small TCP forwarder on the bridge address), an S3-compatible store (moto's
server) and a Standard Webhooks receiver (bench/receiver.py), all on the bridge address.
Hosts B and C are network namespaces (``ip netns``, a veth each on the bridge), each with a
host name of its own, running the Procfile's web, worker and beat from the runtime venv
(.venv) on the shared DATABASE_URL, REDIS_URL and STORAGE_URL with MACHINES=2. Caddy, with
deploy/Caddyfile, balances over B and C on this machine's loopback.

The scenario: with both hosts up, the rate limits are tried across them; then a flood of
submissions through Caddy, a file on every fourth; the host whose beat runs the schedule has
its web, worker and beat killed with SIGKILL mid-flood, stays down until /status names its
worker as silent, and is started again. Then:

- every submission answered 2xx is stored exactly once (none stored twice);
- every stored one is delivered to the receiver, and repeats of a webhook-id are at most the
  attempts that can be in flight on the killed host: each success is recorded as it ends, so
  one attempt per worker process and one per its slow lane (integrations/delivery/worker.py);
- each file downloads byte for byte through C while B is down, and through both after;
- the pull API's 60 a minute and the public endpoint's per-address limit held across both
  hosts, requests alternating between them: the counts are shared;
- only one beat sends the periodic jobs: the sweeper's sends from both hosts' beats, merged,
  are never closer than half its interval, and the survivor takes over after the kill;
- /status names the dead host's worker while it is down, and recovers once it is back.

It prints the figures and exits non-zero when one misses. --disk-storage brings back a
host-local assumption, uploads on each host's disk (STORAGE_URL and MACHINES unset; with
MACHINES=2 the hosts refuse to start), and the check then fails: a file is found only on the
host that took it. Needs root and iproute2, caddy, PostgreSQL and Redis on 127.0.0.1, and the
dev venv's moto_server. Namespaces, bridge and processes are removed on exit, failure included.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import http.client
import itertools
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path

import smoke
import stack

ROOT = stack.ROOT
MOTO = ROOT / ".venv-dev" / "bin" / "moto_server"
BUCKET = "formflow-cluster"
PASSWORD = "cluster-check passphrase " + secrets.token_hex(4)
FLOOD, FILE_EVERY, FLOOD_SECONDS = 240, 4, 30
PULL_REQUESTS, PULL_LIMIT = 80, 60
PUBLIC_REQUESTS = 12
WORKER_CONCURRENCY = 2
SWEEP_SECONDS = 5  # config/settings.py's sweep-deliveries interval
SILENT_AFTER = 150  # /status names a worker silent 2 minutes after its last 30 s stamp

SETUP = """
import json
from accounts.models import User
from forms_app.services import form_create
from integrations.services import integration_create
owner = User.objects.create_user("cluster@example.com", {password!r}, is_verified=True,
                                 monthly_submission_limit=10**9)
flood = form_create(owner=owner, name="Flood", rate_limit=100000)
integration_create(owner=owner, type="WEBHOOK", config={{"url": {hook!r}}})
other = User.objects.create_user("limits@example.com", None, is_verified=True)
limited = form_create(owner=other, name="Per address")
print(json.dumps({{"flood": flood.slug, "limited": limited.slug,
                  "limit": limited.rate_limit}}))
"""
STORED = """
import json
from collections import Counter
from submissions.models import Submission
refs = Counter(dict(row).get("ref") for row in
               Submission.objects.filter(form__slug={slug!r}).values_list("data", flat=True))
print(json.dumps(refs))
"""
SENT = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*Sending due task sweep-deliveries")
TOOK = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*This beat runs the schedule")


class Missed(Exception):
    pass


def say(message: str) -> None:
    print(f"cluster: {message}", flush=True)


def run(*words: object, **options) -> subprocess.CompletedProcess:
    return subprocess.run([str(word) for word in words], check=True, **options)


# --- The network: a bridge on this machine's side, a namespace per host --------------------


class Network:
    """A bridge with host A's address, and a namespace with a veth on it for B and C."""

    def __init__(self, cleanup: ExitStack) -> None:
        tag = f"{os.getpid() % 100000}"
        self.bridge = f"ffbr{tag}"
        self.subnet = free_subnet()
        self.a = f"{self.subnet}.1"
        self.hosts = {name: f"ff{tag}{name}" for name in ("b", "c")}
        self.ips = {"b": f"{self.subnet}.2", "c": f"{self.subnet}.3"}
        cleanup.callback(self.remove)
        run("ip", "link", "add", self.bridge, "type", "bridge")
        run("ip", "addr", "add", f"{self.a}/24", "dev", self.bridge)
        run("ip", "link", "set", self.bridge, "up")
        for name, namespace in self.hosts.items():
            inside, outside = f"ffv{tag}{name}", f"ffv{tag}{name}p"
            run("ip", "netns", "add", namespace)
            run("ip", "link", "add", inside, "type", "veth", "peer", "name", outside)
            run("ip", "link", "set", outside, "master", self.bridge)
            run("ip", "link", "set", outside, "up")
            run("ip", "link", "set", inside, "netns", namespace)
            run("ip", "-n", namespace, "addr", "add", f"{self.ips[name]}/24", "dev", inside)
            run("ip", "-n", namespace, "link", "set", inside, "up")
            run("ip", "-n", namespace, "link", "set", "lo", "up")
        say(f"hosts: A {self.a} (bridge {self.bridge}), B {self.ips['b']}, "
            f"C {self.ips['c']} (namespaces {', '.join(self.hosts.values())})")

    def inside(self, name: str, words: list) -> list:
        """``words`` run in host ``name``'s namespace, under a host name of its own (a UTS
        namespace), as a separate machine would be: Celery names its worker after it."""
        return ["ip", "netns", "exec", self.hosts[name], "unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', f"formflow-{name}", *words]

    def remove(self) -> None:
        for namespace in self.hosts.values():
            subprocess.run(["ip", "netns", "del", namespace], stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "link", "del", self.bridge], stderr=subprocess.DEVNULL)


def free_subnet() -> str:
    """A 10.247.N.0/24 that no interface or route of this machine uses."""
    used = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True).stdout
    used += subprocess.run(["ip", "-4", "route"], capture_output=True, text=True).stdout
    for third in sorted(range(1, 255), key=lambda _: secrets.randbelow(1000)):
        if f"10.247.{third}." not in used:
            return f"10.247.{third}"
    raise Missed("no free 10.247.N.0/24 on this machine")


# --- Host A: forwarding to this machine's PostgreSQL and Redis ------------------------------


def forward(listen: str, pairs: list[str]) -> None:
    """Listen on ``listen`` at each PORT:TARGET and pipe every connection to 127.0.0.1:TARGET
    (the servers listen on loopback only, which the namespaces cannot reach)."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    def handler(target: int):
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target)
            except OSError:
                writer.close()
                return
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        return handle

    async def main() -> None:
        servers = []
        for pair in pairs:
            port, target = (int(part) for part in pair.split(":"))
            servers.append(await asyncio.start_server(handler(target), listen, port,
                                                      backlog=1024))
        await asyncio.gather(*(server.serve_forever() for server in servers))

    asyncio.run(main())


# --- The hosts' processes --------------------------------------------------------------------


class Host:
    def __init__(self, name: str, network: Network, env: dict, logs: Path) -> None:
        self.name, self.network, self.logs = name, network, logs
        self.ip, self.port = network.ips[name], stack.free_port()
        self.env = {**env, "BIND_HOST": self.ip, "PORT": str(self.port),
                    "DATA_DIR": str(logs.parent / f"host-{name}")}
        self.base = f"http://{self.ip}:{self.port}"
        self.processes: list[subprocess.Popen] = []
        self.running = ExitStack()

    def start(self) -> None:
        self.launch()
        self.wait_until_up()

    def launch(self) -> None:
        for process in ("web", "worker", "beat"):
            env = dict(self.env)
            if process == "beat":  # the sweeper's sends are DEBUG lines (config/celery.py)
                env["LOG_LEVEL"] = "DEBUG"
            words = self.network.inside(self.name, stack.command(process, env, stack.RUNTIME_BIN))
            self.processes.append(self.running.enter_context(stack.started(
                words, env, self.logs / f"{self.name}-{process}.log")))

    def wait_until_up(self) -> None:
        stack.wait_until_up(self.base, self.processes, headers=smoke.VIA_PROXY)

    def kill(self) -> None:
        """SIGKILL to every process of the host at once, as a machine lost."""
        for process in self.processes:
            os.killpg(process.pid, signal.SIGKILL)
        for process in self.processes:
            process.wait()
        self.running.close()
        self.processes, self.running = [], ExitStack()

    def stop(self) -> None:
        """At the end: SIGKILL too, as nothing is left to prove by a graceful stop."""
        self.kill()

    def log(self, process: str) -> str:
        return (self.logs / f"{self.name}-{process}.log").read_text(errors="replace")


# --- Requests --------------------------------------------------------------------------------


class Flood:
    """``FLOOD`` submissions to the flood form through Caddy, spread over FLOOD_SECONDS by 8
    threads, a PDF on every FILE_EVERY-th; each one's status is kept by its ref."""

    def __init__(self, proxy: str, slug: str) -> None:
        self.proxy, self.slug = urllib.parse.urlsplit(proxy), slug
        self.statuses: dict[str, int] = {}
        self.files: dict[str, bytes] = {}
        self.lock = threading.Lock()
        self.next = 0
        self.started = time.monotonic()
        self.threads = [threading.Thread(target=self.send_all, daemon=True) for _ in range(8)]
        for thread in self.threads:
            thread.start()

    def wait(self) -> None:
        for thread in self.threads:
            thread.join()

    def send_all(self) -> None:
        while True:
            with self.lock:
                number, self.next = self.next, self.next + 1
            if number >= FLOOD:
                return
            time.sleep(max(0.0, self.started + number * FLOOD_SECONDS / FLOOD - time.monotonic()))
            ref = f"r{number}"
            data = b"%PDF-1.7\n" + secrets.token_bytes(4096) if number % FILE_EVERY == 0 else None
            status = self.send(ref, data)
            with self.lock:
                self.statuses[ref] = status
                if data is not None and 200 <= status < 300:
                    self.files[ref] = data

    def send(self, ref: str, data: bytes | None) -> int:
        fields = {"name": "Ada", "message": f"flood {ref}", "ref": ref}
        if data is None:
            body, kind = json.dumps(fields).encode(), "application/json"
        else:
            boundary = secrets.token_hex(12)
            parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                     f"{value}\r\n".encode() for name, value in fields.items()]
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="cv"; '
                         f'filename="{ref}.pdf"\r\nContent-Type: application/pdf\r\n\r\n'.encode()
                         + data + f"\r\n--{boundary}--\r\n".encode())
            body, kind = b"".join(parts), f"multipart/form-data; boundary={boundary}"
        connection = http.client.HTTPSConnection(self.proxy.hostname, self.proxy.port,
                                                 timeout=60, context=smoke.TLS)
        try:
            connection.request("POST", f"/api/v1/f/{self.slug}", body,
                               {"Content-Type": kind, "Accept": "application/json"})
            return connection.getresponse().status
        except OSError:
            return 0
        finally:
            connection.close()

    @property
    def accepted(self) -> list[str]:
        return [ref for ref, status in self.statuses.items() if 200 <= status < 300]


def api(base: str, method: str, path: str, body=None, token: str | None = None,
        headers: dict | None = None) -> tuple[int, dict | None, object]:
    """One request to ``base`` (Caddy over HTTPS, or a host directly as if through it)."""
    direct = not base.startswith("https:")
    status, raw, got = stack.request(
        method, base + path, body, token, {**(smoke.VIA_PROXY if direct else {}),
                                           **(headers or {})},
        context=None if direct else smoke.TLS)
    try:
        return status, json.loads(raw) if raw else None, got
    except ValueError:
        return status, None, got


def fresh_minute() -> None:
    """Start a rate-limit burst early in a minute, so no fixed window ends inside it."""
    second = datetime.now().second
    if second > 54:
        time.sleep(61 - second)


# --- The checks ------------------------------------------------------------------------------


def stored_refs(env: dict, slug: str) -> Counter:
    output = manage(env, "shell", "-c", STORED.format(slug=slug))
    return Counter(json.loads(output.strip().splitlines()[-1]))


def manage(env: dict, *arguments: str) -> str:
    done = subprocess.run([stack.RUNTIME_BIN / "python", "manage.py", *arguments], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    if done.returncode:
        raise Missed(f"manage.py {arguments[0]}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def receiver_stats(url: str) -> dict:
    status, body = stack.probe(url)
    if status != 200 or body is None:
        raise Missed(f"the webhook receiver did not answer ({status})")
    return body


def status_report(proxy: str, token: str) -> dict:
    return api(proxy, "GET", "/status", token=token)[1] or {}


def download_all(bases: dict[str, str], listed: list[dict], files: dict[str, bytes]) -> int:
    """Every file, through each host in ``bases``: byte for byte. How many downloads."""
    links = {}
    for row in listed:
        for file in row.get("files") or []:
            links[file["name"].removesuffix(".pdf")] = urllib.parse.urlsplit(file["url"])
    missing = set(files) - set(links)
    if missing:
        raise Missed(f"{len(missing)} files not listed with their submissions")
    count = 0
    for ref, data in files.items():
        link = links[ref]
        for name, base in bases.items():
            status, raw, _ = stack.request("GET", f"{base}{link.path}?{link.query}",
                                           headers=smoke.VIA_PROXY)
            if status != 200 or raw != data:
                raise Missed(f"the file of {ref} through host {name.upper()}: {status}, "
                             f"{len(raw)} bytes of {len(data)}")
            count += 1
    return count


def listed_rows(proxy: str, form_id: str, token: str) -> list[dict]:
    rows, page = [], 1
    while True:
        status, body, _ = api(proxy, "GET",
                              f"/api/v1/forms/{form_id}/submissions?limit=100&page={page}",
                              token=token)
        if status != 200:
            raise Missed(f"listing the submissions: {status} {body}")
        batch = (body or {}).get("data", [])
        rows += batch
        if len(batch) < 100:
            return rows
        page += 1


def pull_limit(hosts: dict[str, Host], key: str, form_id: str) -> dict:
    """PULL_REQUESTS to the pull API with one key, alternating between the hosts, all in one
    of the key's windows (their ends are staggered by key: the first answer's
    X-RateLimit-Reset says when this one ends)."""
    answers: Counter = Counter()

    def ask(number: int):
        name = "bc"[number % 2]
        status, _, headers = api(hosts[name].base, "GET",
                                 f"/api/v1/submissions?formId={form_id}&limit=1", token=key)
        answers[(name, status)] += 1
        return headers

    left = int(ask(0).get("X-RateLimit-Reset") or 0) - time.time()
    if left < 10:  # too close to the window's end: the burst starts in the next one
        time.sleep(max(0.0, left) + 1)
        answers.clear()
        ask(0)
    for number in range(1, PULL_REQUESTS):
        ask(number)
    return {f"{name.upper()} {status}": count for (name, status), count in sorted(answers.items())}


def public_limit(hosts: dict[str, Host], slug: str) -> dict:
    """PUBLIC_REQUESTS submissions from one client address, alternating between the hosts
    (the address each host takes from X-Forwarded-For, as Caddy writes it)."""
    fresh_minute()
    answers: Counter = Counter()
    for number in range(PUBLIC_REQUESTS):
        name = "bc"[number % 2]
        status, _, _ = api(hosts[name].base, "POST", f"/api/v1/f/{slug}", {"n": str(number)},
                           headers={"X-Forwarded-For": "203.0.113.9"})
        answers[(name, status)] += 1
    return {f"{name.upper()} {status}": count for (name, status), count in sorted(answers.items())}


def ok_count(answers: dict) -> int:
    return sum(count for label, count in answers.items() if label.endswith(" 200"))


def beat_sends(hosts: dict[str, Host]) -> list[tuple[datetime, str]]:
    sends = []
    for name, host in hosts.items():
        for line in host.log("beat").splitlines():
            found = SENT.match(line)
            if found:
                sends.append((stamp(found[1]), name))
    return sorted(sends)


def stamp(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f")


def wait_for(what: str, condition, timeout: float, every: float = 1.0):
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        if time.monotonic() > deadline:
            raise Missed(f"{what}: not within {timeout:.0f} s")
        time.sleep(every)


# --- The scenario ----------------------------------------------------------------------------


def scenario(args: argparse.Namespace, work: Path, cleanup: ExitStack) -> dict:
    began = time.monotonic()
    logs = work / "logs"
    logs.mkdir()
    network = Network(cleanup)
    redis_port, postgres_port = stack.free_port(), stack.free_port()
    postgres = urllib.parse.urlsplit(args.postgres)
    cleanup.enter_context(stack.started(
        [sys.executable, __file__, "forward", network.a, f"{postgres_port}:{postgres.port or 5432}",
         f"{redis_port}:{urllib.parse.urlsplit(args.redis_url).port or 6379}"],
        os.environ, logs / "forward.log"))
    moto_port, hook_port, https_port = stack.free_port(), stack.free_port(), stack.free_port()
    cleanup.enter_context(stack.started([MOTO, "-H", network.a, "-p", moto_port], os.environ,
                                        logs / "moto.log"))
    cleanup.enter_context(stack.started(
        [sys.executable, ROOT / "bench" / "receiver.py", hook_port, network.a], os.environ,
        logs / "receiver.log"))
    store = f"http://{network.a}:{moto_port}"
    stack.wait_for_answer(store)
    if stack.request("PUT", f"{store}/{BUCKET}")[0] != 200:
        raise Missed("moto's server did not make the bucket")
    database = f"{args.postgres.rstrip('/')}/{args.database}"
    run("psql", "-q", f"{args.postgres.rstrip('/')}/postgres", "-c",
        f"DROP DATABASE IF EXISTS {args.database}", "-c", f"CREATE DATABASE {args.database}")
    run("redis-cli", "-u", args.redis_url, "flushdb", stdout=subprocess.DEVNULL)
    redis_db = urllib.parse.urlsplit(args.redis_url).path.strip("/") or "0"
    proxy = f"https://localhost:{https_port}"
    token = secrets.token_urlsafe(24)
    env = {**os.environ,
           "DATABASE_URL": f"postgres://{postgres.username}@{network.a}:{postgres_port}/"
                           f"{args.database}",
           "REDIS_URL": f"redis://{network.a}:{redis_port}/{redis_db}",
           "SECRET_KEY": secrets.token_urlsafe(50),
           "FIELD_ENCRYPTION_KEYS": base64.urlsafe_b64encode(os.urandom(32)).decode(),
           "BASE_URL": proxy, "TRUSTED_PROXY_COUNT": "1",
           "ALLOWED_HOSTS": f"localhost,127.0.0.1,{network.ips['b']},{network.ips['c']}",
           "WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true", "DELIVERY_RETRY_DELAYS": "1,2,2,2,2,2,2",
           "METRICS_TOKEN": token, "WEB_CONCURRENCY": "1",
           "WORKER_CONCURRENCY": str(WORKER_CONCURRENCY), "LOG_LEVEL": "INFO",
           "STORAGE_URL": f"s3://{BUCKET}/uploads", "S3_ENDPOINT_URL": store,
           "AWS_ACCESS_KEY_ID": "cluster", "AWS_SECRET_ACCESS_KEY": "cluster",
           "AWS_DEFAULT_REGION": "us-east-1", "MACHINES": "2"}
    for name in ("DEBUG", "DJANGO_SETTINGS_MODULE", "CELERY_BROKER_URL", "EMAIL_HOST"):
        env.pop(name, None)
    if args.disk_storage:
        for name in ("STORAGE_URL", "MACHINES"):
            env.pop(name)
        say("--disk-storage: uploads on each host's own disk (STORAGE_URL, MACHINES unset)")
    admin = {**env, "DATABASE_URL": database, "DATA_DIR": str(work / "host-a")}
    manage(admin, "migrate", "--no-input")
    made = json.loads(manage(admin, "shell", "-c", SETUP.format(
        password=PASSWORD, hook=f"http://{network.a}:{hook_port}/hook")).strip().splitlines()[-1])
    key = manage(admin, "createapikey", "--user", "cluster@example.com", "--name", "cluster",
                 "--form", made["flood"]).strip()
    hosts = {name: Host(name, network, env, logs) for name in ("b", "c")}
    for host in hosts.values():
        cleanup.callback(host.stop)
    for host in hosts.values():
        host.launch()
    for host in hosts.values():
        host.wait_until_up()
    smoke.caddy(cleanup, work, " ".join(f"{h.ip}:{h.port}" for h in hosts.values()), https_port)
    stack.wait_until_ready(proxy, context=smoke.TLS)
    say(f"B and C serve behind Caddy at {proxy} ({time.monotonic() - began:.0f} s in)")

    status, body, _ = api(proxy, "POST", "/api/auth/token",
                          {"email": "cluster@example.com", "password": PASSWORD})
    if status != 200:
        raise Missed(f"signing in: {status} {body}")
    access = body["accessToken"]
    forms = {form["slug"]: form["_id"] for form in api(proxy, "GET", "/api/v1/forms",
                                                        token=access)[1] or []}
    flood_id = forms[made["flood"]]
    uploads = {"fileUploads": {"maxBytes": 65536, "maxFiles": 1, "types": ["application/pdf"]}}
    if api(proxy, "PATCH", f"/api/v1/forms/{flood_id}", uploads, token=access)[0] != 200:
        raise Missed("turning file uploads on failed")
    hook_stats = f"http://{network.a}:{hook_port}/stats"

    def holder() -> str | None:
        for name, host in hosts.items():
            if "This beat runs the schedule" in host.log("beat"):
                return name
        return None

    # The limits first, while both hosts are up and the machine is quiet.
    pull = pull_limit(hosts, key, flood_id)
    public = public_limit(hosts, made["limited"])
    leader = wait_for("a beat running the schedule", holder, 60)
    victim, survivor = hosts[leader], hosts["c" if leader == "b" else "b"]
    flood = Flood(proxy, made["flood"])
    # Mid-flood, with deliveries under way: once the receiver has 30, or two thirds of the
    # flood are sent (a loaded machine's niced workers may not have begun).
    wait_for("the flood to get under way", lambda: receiver_stats(hook_stats)["unique"] >= 30
             or flood.next >= FLOOD * 2 // 3, FLOOD_SECONDS * 3, 0.1)
    victim.kill()
    killed, killed_wall = time.monotonic(), datetime.now()
    killed_at = time.time()
    say(f"host {victim.name.upper()} (its beat ran the schedule) killed with SIGKILL, "
        f"{time.monotonic() - flood.started:.1f} s into the flood")
    flood.wait()
    say(f"flood done: {len(flood.accepted)} of {FLOOD} answered 2xx")
    worker = f"celery@formflow-{victim.name}"

    def named_silent() -> dict | None:
        report = status_report(proxy, token)
        silent = report.get("checks", {}).get("workers", {}).get("silent") or []
        return report if worker in silent else None

    # Meanwhile every file downloads through the survivor, the killed host's too.
    listed = listed_rows(proxy, flood_id, access)
    downloads = download_all({survivor.name: survivor.base}, listed, flood.files)
    named = wait_for(f"/status naming {worker}", named_silent, SILENT_AFTER, 3)
    named_after = time.monotonic() - killed
    say(f"/status names {worker} silent {named_after:.0f} s after the kill: "
        f"{json.dumps(named['checks']['workers'])}")

    restarted = time.monotonic()
    victim.start()

    def recovered() -> bool:
        report = status_report(proxy, token)
        workers = report.get("checks", {}).get("workers", {})
        return workers.get("silent") == [] and workers.get("seen") == 2
    wait_for("/status to see both workers again", recovered, 120)
    recovery = time.monotonic() - restarted
    refs = stored_refs(admin, made["flood"])
    wanted = sum(refs.values())
    wait_for("every stored submission delivered",
             lambda: receiver_stats(hook_stats)["unique"] >= wanted, 120, 0.5)
    downloads += download_all({name: host.base for name, host in hosts.items()},
                              listed_rows(proxy, flood_id, access), flood.files)
    time.sleep(SWEEP_SECONDS)  # one more sweep, from whichever beat holds the schedule now
    hook = receiver_stats(hook_stats)
    sends = beat_sends(hosts)
    gaps = [(later - earlier).total_seconds()
            for (earlier, _), (later, _) in itertools.pairwise(sends)]
    took_over = [stamp(found[1]) for line in survivor.log("beat").splitlines()
                 if (found := TOOK.match(line))]
    answered_by = {name.upper(): host.log("web").count(f"/api/v1/f/{made['flood']}")
                   for name, host in hosts.items()}
    proxy_errors = Counter(
        "retried with a closed body" if "invalid Read on closed Body" in line else "other"
        for line in (logs / "caddy.log").read_text(errors="replace").splitlines()
        if '"logger":"http.log.error' in line)
    # Each success is recorded as it ends: only an attempt in flight can be sent again, one
    # per pool process and one per process's slow lane (integrations/delivery/worker.py). A
    # batch attempts several destinations side by side, but the forms here have one each.
    bound = WORKER_CONCURRENCY * 2
    figures = {
        "submissions": {"sent": FLOOD, "answered_2xx": len(flood.accepted),
                        "other": dict(Counter(str(s) for s in flood.statuses.values()
                                              if not 200 <= s < 300)),
                        "taken_by_host": answered_by,
                        # Caddy 2.6 retries a POST whose first upstream was the lost host
                        # with its body already closed (caddyserver/caddy#7546): a 502.
                        "proxy_errors": dict(proxy_errors),
                        "stored": wanted, "stored_twice": sum(c > 1 for c in refs.values())},
        "deliveries": {"delivered": hook["unique"], "received": hook["received"],
                       "duplicates": hook["duplicates"], "in_flight_bound": bound},
        "files": {"uploaded": len(flood.files), "downloads_byte_for_byte": downloads},
        "pull_api": pull, "public_per_address": public,
        "beat": {"sweeps_sent": dict(Counter(name.upper() for _, name in sends)),
                 "closest_sends_s": round(min(gaps), 1) if gaps else None,
                 "taken_over_after_kill_s": round(max(
                     (t - killed_wall).total_seconds() for t in took_over), 1)
                 if took_over else None},
        "status": {"named_silent_after_kill_s": round(named_after),
                   "recovered_after_restart_s": round(recovery, 1)},
        "last_delivery_after_kill_s": round(hook["last_at"] - killed_at, 1),
        "seconds": round(time.monotonic() - began),
    }
    print(json.dumps(figures, indent=1), flush=True)
    misses = []
    never_stored = [ref for ref in flood.accepted if refs[ref] == 0]
    if never_stored:
        misses.append(f"{len(never_stored)} answered 2xx but not stored")
    if figures["submissions"]["stored_twice"]:
        misses.append(f"{figures['submissions']['stored_twice']} stored twice")
    if hook["unique"] < wanted:
        misses.append(f"{wanted} stored, {hook['unique']} delivered")
    if hook["duplicates"] > bound:
        misses.append(f"{hook['duplicates']} repeats, over the in-flight bound of {bound}")
    if ok_count(pull) != PULL_LIMIT:
        misses.append(f"the pull API allowed {ok_count(pull)} of {PULL_REQUESTS}, not "
                      f"{PULL_LIMIT}")
    if ok_count(public) != made["limit"]:
        misses.append(f"the public endpoint allowed {ok_count(public)} from one address, not "
                      f"{made['limit']}")
    if not gaps or min(gaps) < SWEEP_SECONDS / 2:
        misses.append(f"the sweeper was sent twice within {min(gaps or [0]):.1f} s: two beats "
                      "ran the schedule")
    if not took_over:
        misses.append(f"host {survivor.name.upper()}'s beat never took the schedule over")
    if min(answered_by.values()) == 0:
        misses.append(f"Caddy sent every submission to one host: {answered_by}")
    return {"figures": figures, "misses": misses}


def main(argv: list[str]) -> int:
    if argv[:1] == ["forward"]:
        forward(argv[1], argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--database", default="formflow_cluster")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--disk-storage", action="store_true",
                        help="uploads on each host's disk: the check must fail")
    parser.add_argument("--keep", action="store_true", help="keep the logs")
    args = parser.parse_args(argv)
    stack.unwind_on_terminate()  # namespaces and processes go on a stop too
    work = Path(tempfile.mkdtemp(prefix="formflow-cluster-"))
    result: dict = {"misses": []}
    try:
        with ExitStack() as cleanup:
            result = scenario(args, work, cleanup)
    except (Missed, stack.StackFailed, subprocess.CalledProcessError) as error:
        result["misses"].append(str(error))
    finally:
        for miss in result["misses"]:
            say(f"MISSED: {miss}")
        if result["misses"] and (work / "logs").exists():
            smoke.show_logs(work / "logs")
        if result["misses"] or args.keep:
            say(f"logs kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    say("FAILED" if result["misses"] else "passed")
    return 1 if result["misses"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
