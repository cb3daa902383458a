"""Where a submission's CPU goes: intake alone, then delivery alone, per process group.

    python3 bench/costs.py [--seconds 15]

The production setup of bench/load.py (PostgreSQL + Redis, gunicorn 2 x 4 threads, a worker
with concurrency 2, beat, one form with a webhook). The worker is stopped (SIGSTOP) while wrk
loads the intake for --seconds, so the web processes, PostgreSQL and Redis carry intake's
cost only; then it is let go and delivers the backlog alone. Prints CPU milliseconds per
submission for each group (gunicorn, worker, pg: every PostgreSQL process, redis, receiver).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load
import stack  # scripts/stack.py, on the path load.py set


def _marker(name: str) -> str:
    """The first four words of a Procfile line, as they show in /proc."""
    return " ".join(stack.command(name, env={})[:4])


GROUPS = {
    "gunicorn": "gunicorn",
    "worker": _marker("worker"),
    "beat": _marker("beat"),
    "redis": "redis-server",
    "receiver": "receiver.py",
}


def group_cpu() -> dict[str, float]:
    """CPU seconds so far of every process, summed by group."""
    tick = os.sysconf("SC_CLK_TCK")
    spent: dict[str, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (FileNotFoundError, ProcessLookupError):
            continue
        group = "pg" if command.startswith("postgres") else next(
            (name for name, marker in GROUPS.items() if marker in command), None
        )
        if group:
            spent[group] = spent.get(group, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return spent


def per_item(before: dict, after: dict, count: int) -> dict[str, float]:
    return {
        group: round((after.get(group, 0.0) - before.get(group, 0.0)) * 1000 / count, 3)
        for group in sorted(after)
        if after.get(group, 0.0) - before.get(group, 0.0) > 0.005
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--server", choices=sorted(load.SERVERS), default="edge")
    args = argparse.Namespace(setup="production", accounts=1, connections=16,
                              **vars(parser.parse_args()))
    work = Path(tempfile.mkdtemp(prefix="formflow-costs-"))
    hook_port, port = stack.free_port(), stack.free_port()
    base = f"http://127.0.0.1:{port}"
    env, slugs = load.prepare(args, work, hook_port)
    paths = [f"/api/v1/f/{slug}" for slug in slugs]
    service = load.servers(args, env, port, None)
    report = {}
    with ExitStack() as running:
        receiver = [sys.executable, load.ROOT / "bench" / "receiver.py", hook_port]
        running.enter_context(stack.started(receiver, env, work / "receiver.log"))
        children = {
            name: running.enter_context(
                stack.started(command, service["env"], work / f"{name}.log"))
            for name, command in service["commands"].items()
        }
        stack.wait_for_answer(base + "/healthz")
        time.sleep(2)
        load.warm_up(env, base, paths, args)
        load.drain(env, hook_port)
        worker = [children["worker"].pid, *load.descendants(children["worker"].pid)]
        for pid in worker:
            os.kill(pid, signal.SIGSTOP)
        delivered_before = load.receiver_stats(hook_port)["unique"]
        before = group_cpu()
        result = load.spread(children["web"].pid,
                             lambda: load.wrk(base, paths, args.seconds, args.connections))
        accepted = result["requests"] - result["non2xx"]
        report["intake"] = {"rps": result["rps"], "web_process_cpu_s": result["web_process_cpu_s"],
                            "cpu_ms_per_submission": per_item(before, group_cpu(), accepted)}
        before, began = group_cpu(), time.monotonic()
        for pid in worker:
            os.kill(pid, signal.SIGCONT)
        load.wait_delivered(hook_port, delivered_before + accepted)
        report["delivery"] = {
            "deliveries_per_second": round(accepted / (time.monotonic() - began)),
            "cpu_ms_per_delivery": per_item(before, group_cpu(), accepted),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
