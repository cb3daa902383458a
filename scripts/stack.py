"""Starting, probing and stopping a FormFlow stack: what scripts/ and bench/ share.

Standard library only. The command lines come from the Procfile (scripts/procfile.py); this
module runs them, each in its own session so that stopping one reaches its children and no
other process, on free ports (within STACK_PORTS=first-last when set), waits for the service
to answer, makes requests to it, and times what the benches measure (``timed``). A script or
bench keeps no copy of these.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from email.message import Message
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from procfile import ROOT, ProcfileError, command

__all__ = [
    "ROOT",
    "ProcfileError",
    "StackFailed",
    "command",
    "free_port",
    "port_taken",
    "probe",
    "request",
    "stage",
    "started",
    "stop",
    "timed",
    "unwind_on_terminate",
    "wait_for_answer",
    "wait_until_ready",
    "wait_until_up",
]

RUNTIME_BIN = ROOT / ".venv" / "bin"


class StackFailed(Exception):
    pass


def free_port(ports: str | None = None) -> int:
    """A port nothing listens on, and not handed out before by this process (it may not be
    bound yet). From ``ports`` or STACK_PORTS (``first-last``) when given, so that people
    sharing a machine can each keep to their own range; else any the system offers."""
    first, _, last = (ports or os.environ.get("STACK_PORTS", "")).partition("-")
    candidates = list(range(int(first), int(last) + 1)) if first and last else [0] * 20
    random.shuffle(candidates)
    for candidate in candidates:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", candidate))
            except OSError:
                continue
            port = sock.getsockname()[1]
        if port not in _handed_out:
            _handed_out.add(port)
            return port
    raise StackFailed(f"no free port in {first}-{last}")


_handed_out: set[int] = set()


def port_taken(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something already listens on ``host:port`` (binding it is refused).

    SO_REUSEADDR, as gunicorn binds: without it the connections a server just closed (in
    TIME_WAIT for a minute after Ctrl+C) would count as a listener."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


@contextmanager
def started(
    words: list, env: Mapping[str, str], log: Path, name: str | None = None
) -> Iterator[subprocess.Popen]:
    """Start one process with its output appended to ``log``; stop it (and only it, with its
    children) afterwards."""
    with log.open("ab") as output:
        if name:
            print(f"stack: starting {name}", flush=True)
        process = subprocess.Popen(
            [str(word) for word in words], cwd=ROOT, env=dict(env), stdout=output,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
    try:
        yield process
    finally:
        stop(process)
        if name:
            print(f"stack: stopped {name}", flush=True)


def stop(process: subprocess.Popen, timeout: float = 30) -> None:
    """SIGTERM to the process's session, then SIGKILL after ``timeout`` seconds."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def request(
    method: str, url: str, body: object = None, token: str | None = None,
    headers: Mapping[str, str] | None = None, timeout: float = 15,
    context: ssl.SSLContext | None = None,
) -> tuple[int, bytes, Message]:
    """One request, ``body`` sent as JSON: its status, raw body and headers, an error status
    included. A connection that fails raises OSError."""
    data = json.dumps(body).encode() if body is not None else None
    prepared = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    prepared.add_header("Accept", "application/json")
    if data is not None:
        prepared.add_header("Content-Type", "application/json")
    if token:
        prepared.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(prepared, timeout=timeout, context=context) as response:
            return response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.read(), error.headers


def probe(url: str, headers: Mapping[str, str] | None = None,
          context: ssl.SSLContext | None = None) -> tuple[int, dict | None]:
    """One GET: its status (0 when nothing answered) and its JSON body, if it has one."""
    try:
        status, raw, _ = request("GET", url, headers=headers, timeout=5, context=context)
    except OSError:
        return 0, None
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, None


def health(base: str, headers: Mapping[str, str] | None = None,
           context: ssl.SSLContext | None = None) -> tuple[str, int, dict | None]:
    """/readyz when the service has it (200 or 503 with JSON), else /healthz: which one
    answered, its status and body."""
    status, body = probe(base + "/readyz", headers, context)
    if status in (200, 503) and isinstance(body, dict) and "status" in body:
        return "/readyz", status, body
    status, body = probe(base + "/healthz", headers, context)
    return "/healthz", status, body


def wait_until_up(
    base: str,
    processes: Sequence[subprocess.Popen] = (),
    timeout: float = 120,
    headers: Mapping[str, str] | None = None,
    context: ssl.SSLContext | None = None,
) -> None:
    """Wait until ``base``/healthz answers 200; fail at once if a process exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                raise StackFailed(f"{process.args[0]} exited with {process.returncode} at start")
        if probe(base + "/healthz", headers, context)[0] == 200:
            return
        time.sleep(0.3)
    raise StackFailed(f"{base}/healthz did not answer within {timeout}s")


def wait_for_answer(url: str, timeout: float = 120) -> None:
    """Wait until ``url`` answers anything at all (a 404 too)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if probe(url)[0]:
            return
        time.sleep(0.3)
    raise StackFailed(f"{url} did not come up within {timeout}s")


def wait_until_ready(
    base: str, processes: Sequence[subprocess.Popen] = (), timeout: float = 150,
    headers: Mapping[str, str] | None = None, context: ssl.SSLContext | None = None,
) -> str:
    """Wait until the service says it is ready (/readyz 200, or /healthz 200 where there is
    no /readyz); return the path that said so. /readyz asks only whether the web process can
    take submissions (from 1.2.0); an older release's also waits for beat's first heartbeat."""
    deadline = time.monotonic() + timeout
    answer: tuple = ()
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                raise StackFailed(f"{process.args[0]} exited with {process.returncode}")
        answer = health(base, headers, context)
        if answer[1] == 200:
            return answer[0]
        time.sleep(1)
    raise StackFailed(f"{base} is not ready after {timeout}s: {answer}")


def unwind_on_terminate() -> None:
    """A SIGTERM (CI's time limit, an operator's kill) ends this process as Ctrl+C would:
    every ``with`` block and ExitStack still cleans up what it started."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


@contextmanager
def stage(label: str) -> Iterator[None]:
    """Print how long the block took (CI prints every pass's duration)."""
    began = time.monotonic()
    print(f"== {label}", flush=True)
    try:
        yield
    finally:
        print(f"== {label}: {time.monotonic() - began:.1f} s", flush=True)


def timed(action: Callable[[], object], repeat: int, warm_up: int = 0) -> dict[str, float]:
    """``action`` run ``warm_up`` times unmeasured, then ``repeat`` times: milliseconds."""
    for _ in range(warm_up):
        action()
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        action()
        samples.append((time.perf_counter() - began) * 1000)
    samples.sort()
    return {
        "median_ms": round(statistics.median(samples), 2),
        "p95_ms": round(samples[max(0, int(len(samples) * 0.95) - 1)], 2),
        "max_ms": round(samples[-1], 2),
    }
