"""Intake under load, over HTTP, against real servers, with the floor in the same run.

    python3 bench/load.py --setup production [--accounts 1] [--seconds 20]
    python3 bench/load.py --setup embedded

production: PostgreSQL (127.0.0.1:5432, a scratch database formflow_bench) and Redis
(127.0.0.1:6379, db 13), gunicorn 2 workers x 4 threads, a Celery worker (concurrency 2)
and beat. embedded: the same as `dev.py start` (SQLite, the filesystem broker, one gunicorn
process with 8 threads, worker and beat in one process). Each form has one webhook to a local
receiver (bench/receiver.py). Load comes from wrk (Debian's package), 16 connections, each
request from its own client address (X-Forwarded-For behind TRUSTED_PROXY_COUNT=1), spread
over --accounts accounts with one form each.

It prints, for FormFlow and for the floor (bench/floor_urls.py: parse the JSON, insert one
row, on the same settings, server and database): req/s and latency percentiles at full load;
then FormFlow's p50/p99 at half its peak rate (a constant-rate client); then the delivery
check (every 2xx stored and delivered exactly once), the time from the last POST to the last
delivery, and the worker CPU per delivery. Ratios are FormFlow / floor.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import stack  # noqa: E402  (scripts/stack.py: the Procfile's lines, starting and stopping them)
from field_rules import RULES  # noqa: E402  (bench/field_rules.py: --rules N takes the first N)

VENV_BIN = stack.RUNTIME_BIN
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"
# Several people may bench on one machine: each names its own database, Redis database and
# port range (BENCH_DATABASE, BENCH_REDIS_DB, and STACK_PORTS=first-last for scripts/stack.py).
PG_DATABASE = os.environ.get("BENCH_DATABASE", "formflow_bench")
PG_URL = f"postgres://postgres@127.0.0.1:5432/{PG_DATABASE}"
REDIS_DB = os.environ.get("BENCH_REDIS_DB", "13")
REDIS_URL = f"redis://127.0.0.1:6379/{REDIS_DB}"
BODY = {"name": "Ada Lovelace", "email": "ada@example.com", "message": "Hello there! " * 10,
        "ref": "SEQUENCE"}

# Each body differs (the thread's number and a counter), as real submissions do, so the spam
# filter's duplicate check never holds one; each thread seeds its own addresses.
WRK_SCRIPT = """
local paths = {%s}
local n = 0
local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end
function init(args)
  math.randomseed(os.time() + id * 7919)
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  n = n + 1
  local a, b, c = math.random(0, 255), math.random(0, 255), math.random(1, 254)
  wrk.headers["X-Forwarded-For"] = "10." .. a .. "." .. b .. "." .. c
  local body = string.gsub('%s', "SEQUENCE", id .. "-" .. n)
  return wrk.format(nil, paths[(n %% #paths) + 1], nil, body)
end
"""


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and all its descendants, living ones included."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for child in [pid, *descendants(pid)]:
        try:
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def descendants(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, IndexError):
                continue
            if parent == pid:
                found += [int(entry.name), *descendants(int(entry.name))]
    return found


def wrk(base: str, paths: list[str], seconds: int, connections: int) -> dict:
    script = Path(tempfile.mkstemp(suffix=".lua")[1])
    quoted = ", ".join(f'"{path}"' for path in paths)
    script.write_text(WRK_SCRIPT % (quoted, json.dumps(BODY)))
    result = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script), base],
        capture_output=True, text=True, check=True,
    )
    script.unlink()
    return parse_wrk(result.stdout)


def parse_wrk(text: str) -> dict:
    def ms(value: str) -> float:
        number, unit = re.match(r"([\d.]+)(\w+)", value).groups()
        return float(number) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]

    found = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))}
    for label in ("50", "90", "99"):
        found[f"p{label}"] = ms(re.search(rf"\s{label}(?:\.000)?%\s+(\S+)", text).group(1))
    total = re.search(r"(\d+) requests in", text)
    found["requests"] = int(total.group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    found["non2xx"] = int(bad.group(1)) if bad else 0
    errors = re.search(r"Socket errors: (.*)", text)
    found["socket_errors"] = errors.group(1) if errors else "none"
    return found


async def submit_one(reader, writer, host: str, paths: list[str], index: int) -> int:
    """One JSON submission on a kept-alive connection, from client address number ``index``;
    its status."""
    # Unique across phases too (the warm-up and the burst reuse indexes, and so addresses).
    body = json.dumps({**BODY, "ref": f"{time.monotonic_ns()}-{index}"}).encode()
    ip = f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 254 + 1}"
    writer.write(
        f"POST {paths[index % len(paths)]} HTTP/1.1\r\nHost: {host}\r\n"
        f"Content-Type: application/json\r\nX-Forwarded-For: {ip}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n".encode() + body
    )
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))
    await reader.readexactly(length)
    return int(head.split(b" ", 2)[1])


async def constant_rate(base: str, paths: list[str], rate: float, seconds: float) -> dict:
    """Open-loop load: requests start on a fixed schedule, latency counted from the schedule,
    so a slow answer cannot hide the queue behind it."""
    host, port = base.removeprefix("http://").split(":")
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    pool: asyncio.Queue = asyncio.Queue()
    for _ in range(64):
        pool.put_nowait(None)

    async def one(index: int, due: float) -> None:
        connection = await pool.get()
        try:
            if connection is None:
                connection = await asyncio.open_connection(host, int(port))
            status = await submit_one(*connection, host, paths, index)
            latencies.append(time.monotonic() - due)
            statuses[status] = statuses.get(status, 0) + 1
        except (OSError, asyncio.IncompleteReadError):
            statuses[0] = statuses.get(0, 0) + 1
            connection = None
        pool.put_nowait(connection)

    start = time.monotonic()
    tasks = []
    for index in range(int(rate * seconds)):
        due = start + index / rate
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        tasks.append(asyncio.create_task(one(index, due)))
    await asyncio.gather(*tasks)
    latencies.sort()
    return {
        "rate": rate,
        "p50": latencies[len(latencies) // 2] * 1000,
        "p99": latencies[int(len(latencies) * 0.99) - 1] * 1000,
        "statuses": statuses,
    }


async def burst(base: str, paths: list[str], count: int, connections: int) -> dict:
    """``count`` submissions as fast as ``connections`` kept-alive connections send them."""
    host, port = base.removeprefix("http://").split(":")
    statuses: dict[int, int] = {}
    numbers = iter(range(count))

    async def client() -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        for index in numbers:
            status = await submit_one(reader, writer, host, paths, index)
            statuses[status] = statuses.get(status, 0) + 1
        writer.close()

    start = time.monotonic()
    await asyncio.gather(*(client() for _ in range(connections)))
    return {"count": count, "seconds": round(time.monotonic() - start, 2), "statuses": statuses}


def receiver_stats(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=5) as response:
        return json.loads(response.read())


def manage(env: dict, *args: str, python: Path = VENV_BIN / "python") -> str:
    return subprocess.run(
        [str(python), "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
        check=True,
    ).stdout


SETUP = """
import json
from accounts.models import User
from forms_app.services import form_create
from integrations.services import integration_create
slugs = []
for n in range({accounts}):
    owner = User.objects.create_user(f"bench{{n}}@example.com", "bench-password-1",
                                     is_verified=True, monthly_submission_limit=10**9)
    # Intake and its webhook are measured: the owner's notification email is off.
    form = form_create(owner=owner, name=f"Bench {{n}}", rate_limit=10000, notify_owner=False,
                       {rules})
    integration_create(owner=owner, type="WEBHOOK", config={{"url": "{hook}"}})
    slugs.append(form.slug)
print(json.dumps(slugs))
"""

COUNTS = """
from submissions.models import Submission
from integrations.models import Delivery
print(Submission.objects.count(), Delivery.objects.filter(state="delivered").count())
"""


def sql(env: dict, statement: str) -> None:
    database = env.get("DATABASE_URL")
    if database:
        subprocess.run(["psql", "-q", database, "-c", statement], check=True)
    else:
        import sqlite3

        with sqlite3.connect(Path(env["DATA_DIR"]) / "db.sqlite3") as db:
            db.execute(statement)


def prepare(args: argparse.Namespace, work: Path, hook_port: int) -> tuple[dict, list[str]]:
    env = {
        **os.environ,
        "DATA_DIR": str(work / "data"),
        "SECRET_KEY": secrets.token_urlsafe(50),
        "FIELD_ENCRYPTION_KEYS": base64.urlsafe_b64encode(os.urandom(32)).decode(),
        "WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true",
        "TRUSTED_PROXY_COUNT": "1",
        "DEFAULT_MONTHLY_SUBMISSION_LIMIT": str(10**9),
    }
    for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE",
                 "DEBUG"):
        env.pop(name, None)
    if args.setup == "production":
        subprocess.run(["psql", "-q", PG_ADMIN, "-c", f"DROP DATABASE IF EXISTS {PG_DATABASE}"],
                       check=True)
        subprocess.run(["psql", "-q", PG_ADMIN, "-c", f"CREATE DATABASE {PG_DATABASE}"],
                       check=True)
        subprocess.run(["redis-cli", "-n", REDIS_DB, "flushdb"], check=True,
                       stdout=subprocess.DEVNULL)
        env.update(DATABASE_URL=PG_URL, REDIS_URL=REDIS_URL)
    manage(env, "migrate", "--no-input")
    sql(env, "CREATE TABLE bench_floor (id serial PRIMARY KEY, data text)"
        if args.setup == "production"
        else "CREATE TABLE bench_floor (id integer PRIMARY KEY AUTOINCREMENT, data text)")
    hook = f"http://127.0.0.1:{hook_port}/hook"
    rules = f"field_rules={RULES[:args.rules]!r}" if args.rules else ""
    output = manage(env, "shell", "-c", SETUP.format(accounts=args.accounts, hook=hook,
                                                     rules=rules))
    slugs = json.loads(output.strip().splitlines()[-1])
    return env, slugs


# The production web server (the Procfile's), and gunicorn's own threaded worker for comparison.
SERVERS = {
    "edge": [],
    "gthread": ["config.wsgi:application"],
}


def web_command(args: argparse.Namespace, env: dict, port: int) -> list:
    workers = "2" if args.setup == "production" else "1"
    threads = "4" if args.setup == "production" else "8"
    words = stack.command("web", {**env, "PORT": str(port), "WEB_CONCURRENCY": workers,
                                  "WEB_THREADS": threads}, VENV_BIN)
    if SERVERS[args.server]:
        at = words.index("--worker-class")
        words = [words[0], *SERVERS[args.server], *words[2:at], *words[at + 2:]]
    return [*words, "--backlog", "2048"]


def servers(args: argparse.Namespace, env: dict, port: int, settings: str | None) -> dict:
    web_env = {**env, **({"DJANGO_SETTINGS_MODULE": settings} if settings else {})}
    commands = {"web": web_command(args, env, port)}
    quiet = {**env, "LOG_LEVEL": "WARNING", "WORKER_CONCURRENCY": "2"}
    if settings is None:
        if args.setup == "production":
            commands["worker"] = stack.command("worker", quiet, VENV_BIN)
            commands["beat"] = stack.command("beat", quiet, VENV_BIN)
        else:  # as dev.py start runs it: beat inside the worker
            commands["worker"] = [*stack.command("worker", quiet, VENV_BIN), "--beat"]
    return {"env": web_env, "commands": commands}


def run(args: argparse.Namespace) -> None:
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    subprocess.run([sys.executable, "dev.py", "install"], cwd=ROOT, check=True)
    work = Path(tempfile.mkdtemp(prefix="formflow-load-"))
    hook_port, port = stack.free_port(), stack.free_port()
    base = f"http://127.0.0.1:{port}"
    env, slugs = prepare(args, work, hook_port)
    paths = [f"/api/v1/f/{slug}" for slug in slugs]
    report: dict = {"setup": args.setup, "accounts": args.accounts, "rules": args.rules}
    with ExitStack() as running:
        receiver = [sys.executable, ROOT / "bench" / "receiver.py", hook_port]
        running.enter_context(stack.started(receiver, env, work / "receiver.log"))
        # The floor first, on the same settings and server, then FormFlow.
        floor = servers(args, env, port, "bench.floor_settings")
        with stack.started(floor["commands"]["web"], floor["env"], work / "floor.log") as web:
            stack.wait_for_answer(base + "/api/v1/f/none", 60)
            warm_up(env, base, paths, args)
            floors = [spread(web.pid, lambda: wrk(base, paths, args.seconds, args.connections))
                      for _ in range(args.runs)]
        report["floor_runs_rps"] = [result["rps"] for result in floors]
        report["floor"] = max(floors, key=lambda result: result["rps"])
        service = servers(args, env, port, None)
        children = {
            name: running.enter_context(
                stack.started(command, service["env"], work / f"{name}.log"))
            for name, command in service["commands"].items()
        }
        stack.wait_for_answer(base + "/healthz")
        time.sleep(2)
        warm_up(env, base, paths, args)
        drain(env, hook_port)
        runs = [measured_run(args, env, base, paths, hook_port, children)
                for _ in range(args.runs)]
        if args.profile:
            profiled(args, base, paths, children)
        report["formflow_runs_rps"] = [run["formflow"]["rps"] for run in runs]
        report.update(max(runs, key=lambda run: run["formflow"]["rps"]))
        half = report["formflow"]["rps"] / 2
        report["half_rate"] = asyncio.run(constant_rate(base, paths, half, args.seconds / 2))
        report["burst"] = measured_burst(args, env, base, paths, hook_port)
    report["ratio_rps"] = round(report["formflow"]["rps"] / report["floor"]["rps"], 3)
    print(json.dumps(report, indent=2))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"logs kept in {work}")


def warm_up(env: dict, base: str, paths: list[str], args: argparse.Namespace) -> None:
    """A short load, then fresh planner statistics, as autovacuum keeps them on any database
    older than a minute: a scratch database's first plans are for empty tables."""
    wrk(base, paths, 3, args.connections)
    sql(env, "ANALYZE")


def spread(web_pid: int, load) -> dict:
    """Run ``load``; add the CPU seconds each web process spent: gunicorn's processes take
    connections as they come, and one may end up with most of them for a whole run."""
    processes = descendants(web_pid)
    before = [cpu_seconds(pid) for pid in processes]
    result = load()
    result["web_process_cpu_s"] = [
        round(cpu_seconds(pid) - spent, 1) for pid, spent in zip(processes, before, strict=True)
    ]
    return result


def profiled(args, base: str, paths: list[str], children: dict) -> None:
    """One more full-load run (not reported: the sampler takes CPU too) with py-spy sampling
    the web and worker processes; collapsed stacks go to --profile, one file a group. Only
    the thread holding the GIL is sampled: where the CPU goes, not where threads wait."""
    folder = Path(args.profile).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    samplers = [
        subprocess.Popen([args.py_spy, "record", "--pid", str(child.pid), "--subprocesses",
                          "--duration", str(args.seconds), "--format", "raw", "--nonblocking",
                          "--gil", "--output", str(folder / f"{name}.txt")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name, child in children.items() if name in ("web", "worker")
    ]
    wrk(base, paths, args.seconds, args.connections)
    for sampler in samplers:
        sampler.wait(timeout=args.seconds + 60)
    print(f"profiles in {folder}", file=sys.stderr)


def measured_run(args, env: dict, base: str, paths: list[str], hook_port: int,
                 children: dict) -> dict:
    """One full-load run, then every accepted submission delivered: the worker's CPU a
    delivery, and whether each 2xx was stored and delivered exactly once."""
    worker_pid = children["worker"].pid
    worker_cpu_before = cpu_seconds(worker_pid)
    delivered_before = receiver_stats(hook_port)["unique"]
    stored_before = stored_count(env)
    full = spread(children["web"].pid,
                  lambda: wrk(base, paths, args.seconds, args.connections))
    last_post = time.time()
    accepted = full["requests"] - full["non2xx"]
    wait_delivered(hook_port, delivered_before + accepted)
    worker_cpu = cpu_seconds(worker_pid) - worker_cpu_before
    stored, _ = drain(env, hook_port)  # and the few that were in flight when wrk stopped
    stats = receiver_stats(hook_port)
    new_deliveries = stats["unique"] - delivered_before
    return {
        "formflow": full,
        "delivery": {
            "accepted_2xx": accepted,
            "stored": stored - stored_before,
            "delivered": new_deliveries,
            "duplicates": stats["duplicates"],
            "last_delivery_after_last_post_s": round(max(0.0, stats["last_at"] - last_post), 2),
            "worker_cpu_ms_per_delivery": round(worker_cpu * 1000 / max(new_deliveries, 1), 2),
        },
    }


BURST = 5000


def measured_burst(args, env: dict, base: str, paths: list[str], hook_port: int) -> dict:
    """5,000 submissions as fast as the connections send them; how long after the last POST
    the last of them is delivered."""
    drain(env, hook_port)  # what the phase before left in flight is not counted as the burst's
    delivered_before = receiver_stats(hook_port)["unique"]
    sent = asyncio.run(burst(base, paths, BURST, args.connections))
    last_post = time.time()
    wait_delivered(hook_port, delivered_before + sent["statuses"].get(200, 0))
    drain(env, hook_port)
    stats = receiver_stats(hook_port)
    return {
        **sent,
        "delivered": stats["unique"] - delivered_before,
        "last_delivery_after_last_post_s": round(max(0.0, stats["last_at"] - last_post), 2),
    }


def wait_delivered(hook_port: int, unique: int, timeout: float = 300) -> dict:
    """Watch the receiver (not the database, whose polling would compete for the CPU) until
    ``unique`` distinct webhooks have arrived."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stats = receiver_stats(hook_port)
        if stats["unique"] >= unique:
            return stats
        time.sleep(0.05)
    raise SystemExit(f"only {stats['unique']} of {unique} deliveries within {timeout}s")


def stored_count(env: dict) -> int:
    return int(manage(env, "shell", "-c", COUNTS).split()[-2])


def drain(env: dict, hook_port: int, timeout: float = 300) -> tuple[int, int]:
    """Wait until every stored submission has been delivered (one webhook each)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stored, delivered = map(int, manage(env, "shell", "-c", COUNTS).split()[-2:])
        if stored == delivered == receiver_stats(hook_port)["unique"]:
            return stored, delivered
        time.sleep(0.5)
    raise SystemExit(f"deliveries did not finish within {timeout}s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", choices=["production", "embedded"], default="production")
    parser.add_argument("--server", choices=sorted(SERVERS), default="edge",
                        help="edge: the production server (default); gthread: gunicorn's own")
    parser.add_argument("--accounts", type=int, default=1)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--rules", type=int, default=0, choices=range(len(RULES) + 1),
                        metavar=f"0-{len(RULES)}", help="field rules on each form (default none)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3,
                        help="full-load runs of each; the best is reported (gunicorn may give"
                        " one worker process most connections in a run)")
    parser.add_argument("--keep", action="store_true", help="keep the logs and data folder")
    parser.add_argument("--profile", metavar="DIR",
                        help="after the measured runs, one run sampled by py-spy into DIR")
    parser.add_argument("--py-spy", default="py-spy", help="the py-spy command (PyPI)")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
