"""Faults under load: nothing answered 2xx is lost, and delivery recovers in seconds.

    python3 bench/faults.py [--scenario redis|worker|database|embedded] ...

Each production scenario runs on a PostgreSQL cluster and a redis-server of its own, on spare
ports, which it stops and starts: the production web server (2 processes x 4 threads), a
Celery worker (concurrency 2) and beat, from the runtime venv, with a webhook to a local
receiver (bench/receiver.py) that counts every webhook-id. Submissions come at a steady rate
from 8 client threads, each with its own client address.

- redis: Redis (cache and broker) stopped for 30 s during 1,000 submissions, then started
  empty. At least 99.9% must be answered 2xx, and all delivered within 30 s of its return.
- worker: a burst of 300, and the worker's processes killed with SIGKILL mid-delivery (once
  the receiver has 30); it is started again 3 s later. Every delivery done within 30 s of the
  restart; the duplicates are the attempts that were in flight.
- database: PostgreSQL stopped for 20 s during 600 submissions. No 500 (a 503 while it is
  away), and all accepted submissions delivered within 30 s of its return.
- embedded: `dev.py start` on the embedded defaults; its Celery worker killed with SIGKILL
  under load. dev.py starts it again; every 2xx stored and delivered.

Each prints sent / 2xx / other statuses / stored / delivered / duplicates / recovery, and the
run exits non-zero when a scenario misses its mark. .ci/run runs every scenario.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import stack  # noqa: E402  (scripts/stack.py: starting, probing and stopping the stack)
from load import descendants, manage, receiver_stats  # noqa: E402

VENV_BIN = stack.RUNTIME_BIN

BODY = {"name": "Ada Lovelace", "email": "ada@example.com", "message": "Fault test"}
SETUP = """
import json
from accounts.models import User
from forms_app.services import form_create
from integrations.services import integration_create
owner = User.objects.create_user("faults@example.com", "faults-password-1", is_verified=True,
                                 monthly_submission_limit=10**9)
form = form_create(owner=owner, name="Faults", rate_limit=10000)
integration_create(owner=owner, type="WEBHOOK", config={{"url": "{hook}"}})
print(json.dumps(form.slug))
"""
STORED = "from submissions.models import Submission; print(Submission.objects.count())"


class Missed(Exception):
    pass


# --- Load -------------------------------------------------------------------------------------


class Load:
    """``count`` submissions spread evenly over ``seconds`` by 8 threads; a status per request
    (0 when the connection failed)."""

    def __init__(self, port: int, slug: str, count: int, seconds: float) -> None:
        self.port, self.slug, self.count, self.seconds = port, slug, count, seconds
        self.statuses: Counter[int] = Counter()
        self.lock = threading.Lock()
        self.next = 0
        self.started = 0.0
        self.threads = [threading.Thread(target=self.send_all, daemon=True) for _ in range(8)]

    def start(self) -> Load:
        self.started = time.monotonic()
        for thread in self.threads:
            thread.start()
        return self

    def wait(self) -> None:
        for thread in self.threads:
            thread.join()

    def send_all(self) -> None:
        while True:
            with self.lock:
                number, self.next = self.next, self.next + 1
            if number >= self.count:
                return
            due = self.started + number * self.seconds / self.count
            time.sleep(max(0.0, due - time.monotonic()))
            status = self.send(number)
            with self.lock:
                self.statuses[status] += 1

    def send(self, number: int) -> int:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        address = f"10.{number // 65536 % 256}.{number // 256 % 256}.{number % 256}"
        try:
            body = json.dumps({**BODY, "ref": str(number)})
            connection.request("POST", f"/api/v1/f/{self.slug}", body, {
                "Content-Type": "application/json", "X-Forwarded-For": address})
            return connection.getresponse().status
        except OSError:
            return 0
        finally:
            connection.close()

    @property
    def accepted(self) -> int:
        return sum(count for status, count in self.statuses.items() if 200 <= status < 300)


# --- Services of the scenario's own ----------------------------------------------------------


class Postgres:
    """A throwaway cluster on a spare port, trusted on 127.0.0.1."""

    def __init__(self) -> None:
        self.version = sorted(os.listdir("/etc/postgresql"))[-1]  # Debian's cluster layout
        self.port = stack.free_port()
        self.name = f"faults{self.port}"
        subprocess.run(["pg_createcluster", self.version, self.name, "-p", str(self.port), "--",
                        "--auth=trust"], check=True, stdout=subprocess.DEVNULL)
        self.start()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        subprocess.run(["pg_ctlcluster", self.version, self.name, "start"], check=True)

    def stop(self) -> None:
        subprocess.run(["pg_ctlcluster", self.version, self.name, "stop", "-m", "fast"],
                       check=True)

    def drop(self) -> None:
        subprocess.run(["pg_dropcluster", self.version, self.name, "--stop"], check=False)


class Redis:
    def __init__(self, work: Path) -> None:
        self.port, self.work = stack.free_port(), work
        self.child: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.child = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.work)],
            stdout=subprocess.DEVNULL)
        for _ in range(100):
            if subprocess.run(["redis-cli", "-p", str(self.port), "ping"],
                              capture_output=True).returncode == 0:
                return
            time.sleep(0.1)
        raise Missed("redis-server did not start")

    def stop(self) -> None:
        if self.child is not None:
            self.child.kill()
            self.child.wait()
            self.child = None


def stack_env(work: Path, database_url: str | None, redis_url: str | None) -> dict:
    env = {**os.environ, "DATA_DIR": str(work / "data"),
           "SECRET_KEY": secrets.token_urlsafe(50),
           "FIELD_ENCRYPTION_KEYS": base64.urlsafe_b64encode(os.urandom(32)).decode(),
           "WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true", "TRUSTED_PROXY_COUNT": "1",
           "DELIVERY_RETRY_DELAYS": "1,2,2,2,2,2,2"}
    for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE",
                 "DEBUG"):
        env.pop(name, None)
    if database_url:
        env.update(DATABASE_URL=database_url, REDIS_URL=redis_url)
    return env


def prepare(env: dict, hook_port: int) -> str:
    manage(env, "migrate", "--no-input")
    output = manage(env, "shell", "-c", SETUP.format(hook=f"http://127.0.0.1:{hook_port}/hook"))
    return json.loads(output.strip().splitlines()[-1])


def stored(env: dict) -> int:
    return int(manage(env, "shell", "-c", STORED).strip().splitlines()[-1])


def web_command(env: dict, port: int) -> list:
    return stack.command("web", {**env, "PORT": str(port)}, VENV_BIN)


def worker_command(env: dict) -> list:
    return stack.command("worker", env, VENV_BIN)


def receiver_command(port: int) -> list:
    return [sys.executable, ROOT / "bench" / "receiver.py", port]


def supervised_worker(env: dict) -> list:
    """The worker as docs/deploy.md tells operators to run it: under a supervisor that starts it
    again when it exits (systemd's Restart=always). Celery's worker may exit when its broker
    connection drops while it holds an unacknowledged message (kombu raises restoring it)."""
    return ["bash", "-c", 'while true; do "$@"; echo "worker exited with $?; starting it again" '
            '>&2; sleep 1; done', "supervisor", *worker_command(env)]


def wait_delivered(hook_port: int, count: int, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    stats = receiver_stats(hook_port)
    while stats["unique"] < count and time.monotonic() < deadline:
        time.sleep(0.5)
        stats = receiver_stats(hook_port)
    return stats


def report(name: str, load: Load, stored_count: int, stats: dict, back: float | None) -> dict:
    """``back``: the wall-clock time the fault ended; recovery runs from it to the last
    delivery."""
    recovery = None
    if back is not None and stats["last_at"]:
        recovery = round(max(0.0, stats["last_at"] - back), 1)
    line = {"scenario": name, "sent": load.count, "2xx": load.accepted,
            "other": {str(status): count for status, count in sorted(load.statuses.items())
                      if not 200 <= status < 300},
            "stored": stored_count, "delivered": stats["unique"],
            "duplicates": stats["duplicates"], "recovery_s": recovery}
    print(json.dumps(line), flush=True)
    return line


# --- Scenarios --------------------------------------------------------------------------------


def start(running: ExitStack, words: list, env: dict, log: Path) -> subprocess.Popen:
    """Started now, stopped (with its children) when ``running`` closes."""
    return running.enter_context(stack.started(words, env, log))


@contextmanager
def production_stack(work: Path, running: ExitStack):
    postgres = Postgres()
    running.callback(postgres.drop)
    redis = Redis(work)
    running.callback(redis.stop)
    hook_port, port = stack.free_port(), stack.free_port()
    start(running, receiver_command(hook_port), os.environ, work / "receiver.log")
    database = postgres.url.rsplit("/", 1)[0] + "/formflow_faults"
    subprocess.run(["psql", "-q", postgres.url, "-c", "CREATE DATABASE formflow_faults"],
                   check=True)
    env = stack_env(work, database, f"redis://127.0.0.1:{redis.port}/0")
    slug = prepare(env, hook_port)
    start(running, web_command(env, port), env, work / "web.log")
    start(running, stack.command("beat", env, VENV_BIN), env, work / "beat.log")
    stack.wait_for_answer(f"http://127.0.0.1:{port}/healthz")
    yield {"env": env, "port": port, "hook_port": hook_port, "slug": slug,
           "postgres": postgres, "redis": redis}


def at(seconds_after: float, start: float) -> None:
    time.sleep(max(0.0, start + seconds_after - time.monotonic()))


def redis_outage(work: Path) -> dict:
    with ExitStack() as running, production_stack(work, running) as s:
        start(running, supervised_worker(s["env"]), s["env"], work / "worker.log")
        load = Load(s["port"], s["slug"], 1000, 50).start()
        at(10, load.started)
        s["redis"].stop()
        at(40, load.started)
        s["redis"].start()
        back = time.time()
        load.wait()
        stats = wait_delivered(s["hook_port"], load.accepted, 90)
        line = report("redis down 30 s", load, stored(s["env"]), stats, back)
    check(line, min_share=0.999, within=30)
    return line


def worker_killed(work: Path) -> dict:
    with ExitStack() as running, production_stack(work, running) as s:
        worker = start(running, worker_command(s["env"]), s["env"], work / "worker.log")
        wait_for_line(work / "worker.log", " ready.", 120)  # the worker is up and idle
        load = Load(s["port"], s["slug"], 300, 3).start()
        time.sleep(2)
        under_way(s["hook_port"], 30, 60)  # mid-burst, with deliveries under way
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
        time.sleep(3)
        start(running, worker_command(s["env"]), s["env"], work / "worker.log")
        wait_for_line(work / "worker.log", " ready.", 120, times=2)
        back = time.time()
        load.wait()
        stats = wait_delivered(s["hook_port"], load.accepted, 90)
        line = report("worker killed -9", load, stored(s["env"]), stats, back)
    check(line, min_share=1.0, within=30)
    return line


def wait_for_line(log: Path, text: str, timeout: float, times: int = 1) -> None:
    """Until ``text`` is in the log ``times`` times: on a busy machine a worker takes far
    longer than 5 s to start, and a kill before it has begun delivering kills nothing in
    flight; recovery is counted from the restarted worker's start, not its launch."""
    deadline = time.monotonic() + timeout
    while log.read_text(errors="replace").count(text) < times:
        if time.monotonic() > deadline:
            raise Missed(f"{log.name} never said {text!r}")
        time.sleep(0.2)


def under_way(hook_port: int, count: int, timeout: float) -> None:
    """Until the receiver has ``count`` deliveries (or ``timeout`` passed)."""
    deadline = time.monotonic() + timeout
    while receiver_stats(hook_port)["unique"] < count and time.monotonic() < deadline:
        time.sleep(0.05)


def database_outage(work: Path) -> dict:
    with ExitStack() as running, production_stack(work, running) as s:
        start(running, worker_command(s["env"]), s["env"], work / "worker.log")
        load = Load(s["port"], s["slug"], 600, 30).start()
        at(5, load.started)
        s["postgres"].stop()
        at(25, load.started)
        s["postgres"].start()
        back = time.time()
        load.wait()
        stats = wait_delivered(s["hook_port"], load.accepted, 90)
        line = report("database down 20 s", load, stored(s["env"]), stats, back)
    if line["other"].get("500"):
        raise Missed(f"database down: {line['other']['500']} answered 500")
    unexpected = set(line["other"]) - {"503"}
    if unexpected:
        raise Missed(f"database down: answers other than 2xx and 503: {line['other']}")
    check(line, min_share=0.0, within=30)
    return line


def embedded_worker_killed(work: Path) -> dict:
    port, hook_port = stack.free_port(), stack.free_port()
    env = stack_env(work, None, None)
    env["BASE_URL"] = f"http://127.0.0.1:{port}"
    with ExitStack() as running:
        start(running, receiver_command(hook_port), os.environ, work / "receiver.log")
        subprocess.run([sys.executable, "dev.py", "install"], cwd=ROOT, check=True)
        slug = prepare(env, hook_port)
        dev = start(running, [sys.executable, "dev.py", "start", "--port", str(port)], env,
                    work / "dev.log")
        stack.wait_for_answer(f"http://127.0.0.1:{port}/healthz")
        load = Load(port, slug, 400, 20).start()
        time.sleep(5)
        worker = celery_worker_of(dev.pid)
        os.kill(worker, signal.SIGKILL)
        killed = time.time()
        load.wait()
        stats = wait_delivered(hook_port, load.accepted, 120)
        # Recovery here runs from the kill: dev.py notices and restarts the worker itself.
        line = report("embedded worker killed -9", load, stored(env), stats, killed)
    if "worker exited" not in (work / "dev.log").read_text(errors="replace"):
        raise Missed("embedded: dev.py did not report the worker's exit")
    check(line, min_share=1.0, within=60)
    return line


def celery_worker_of(dev_pid: int) -> int:
    for pid in descendants(dev_pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except FileNotFoundError:
            continue
        if any(part.endswith(b"celery") for part in command) and b"worker" in command:
            return pid
    raise Missed("dev.py start runs no Celery worker")


def check(line: dict, min_share: float, within: float | None) -> None:
    name = line["scenario"]
    if line["2xx"] < min_share * line["sent"]:
        raise Missed(f"{name}: only {line['2xx']} of {line['sent']} answered 2xx")
    if line["stored"] < line["2xx"]:
        raise Missed(f"{name}: {line['2xx']} answered 2xx but {line['stored']} stored")
    if line["delivered"] < line["stored"]:
        raise Missed(f"{name}: {line['stored']} stored but {line['delivered']} delivered")
    if within is not None and (line["recovery_s"] is None or line["recovery_s"] > within):
        raise Missed(f"{name}: the last delivery came {line['recovery_s']} s after recovery")


SCENARIOS = {"redis": redis_outage, "worker": worker_killed, "database": database_outage,
             "embedded": embedded_worker_killed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), action="append",
                        help="run only this one (repeatable); all by default")
    parser.add_argument("--keep", action="store_true", help="keep the logs")
    args = parser.parse_args()
    subprocess.run([sys.executable, "dev.py", "install"], cwd=ROOT, check=True)
    missed = []
    for name in args.scenario or list(SCENARIOS):
        work = Path(tempfile.mkdtemp(prefix=f"formflow-faults-{name}-"))
        try:
            SCENARIOS[name](work)
        except Missed as error:
            missed.append(str(error))
            print(f"faults: MISSED: {error}", flush=True)
            args.keep = True
        finally:
            if args.keep:
                print(f"faults: logs kept in {work}", flush=True)
            else:
                shutil.rmtree(work, ignore_errors=True)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
