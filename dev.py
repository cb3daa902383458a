#!/usr/bin/env python3
"""Install and run FormFlow on a fresh machine with nothing but Python 3.11+.

    python3 dev.py start [--port P] # install, migrate, then web server + Celery worker + beat
    python3 dev.py test             # install, then ruff, mypy and the whole test suite
    python3 dev.py install          # only make .venv (what the benchmarks and units run)

start runs the Procfile's web and worker lines (the worker with beat inside it) from .venv,
made from the runtime lock requirements.txt alone; test uses .venv-dev, made from
requirements-dev.txt. A venv is made again only when its lock changed. Standard library only,
because it runs before anything is installed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "scripts"))

import stack  # noqa: E402  (scripts/stack.py: the Procfile's command lines, and probing)

# The service runs from the runtime lock alone, so a dependency that only the test tools bring
# in can never hide: tests get a venv of their own.
RUNTIME_VENV = ROOT / ".venv"
DEV_VENV = ROOT / ".venv-dev"


def bin_dir(venv_dir: Path) -> Path:
    return venv_dir / ("Scripts" if os.name == "nt" else "bin")


BIN = bin_dir(RUNTIME_VENV)
PYTHON = BIN / "python"


def run(*args: str | Path) -> None:
    subprocess.run([str(arg) for arg in args], cwd=ROOT, check=True)


def install(venv_dir: Path, requirements: str) -> Path:
    """Make ``venv_dir`` hold exactly what ``requirements`` locks; return its bin folder."""
    python = bin_dir(venv_dir) / "python"
    lock = ROOT / requirements
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()
    stamp = venv_dir / ".installed"
    if stamp.exists() and stamp.read_text() == f"{requirements} {digest}":
        return bin_dir(venv_dir)
    if venv_dir.exists():
        # Start clean, so nothing left from an older lock (or the test tools) stays behind.
        shutil.rmtree(venv_dir)
    print(f"Creating {venv_dir.name} from {requirements} ...", flush=True)
    venv.EnvBuilder(with_pip=True).create(venv_dir)
    run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--require-hashes", "-r", lock)
    stamp.write_text(f"{requirements} {digest}")
    return bin_dir(venv_dir)


def start(port: int) -> int:
    # Checked first, so a taken port fails at once, and not after gunicorn's own retries.
    if stack.port_taken(port):
        print(f"Port {port} is in use: stop what listens on it, or choose another with "
              f"`python3 dev.py start --port N`.", file=sys.stderr)
        return 1
    install(RUNTIME_VENV, "requirements.txt")
    os.environ.update(start_environment(port, os.environ))
    run(PYTHON, "manage.py", "migrate", "--no-input")
    return supervise(commands(), f"http://127.0.0.1:{port}", os.environ["BASE_URL"])


def start_environment(port: int, environ: dict | os._Environ) -> dict[str, str]:
    """What dev.py start sets for its processes: the port, and BASE_URL on that port (unless
    BASE_URL is set), so the endpoints and snippets it shows are the ones that answer."""
    return {
        "PORT": str(port),
        "BIND_HOST": "127.0.0.1",
        "BASE_URL": environ.get("BASE_URL") or f"http://localhost:{port}",
        # Without REDIS_URL the rate-limit counters live in one process's memory, so the
        # embedded setup serves from a single process with threads.
        "WEB_CONCURRENCY": environ.get("WEB_CONCURRENCY", "2") if environ.get("REDIS_URL") else "1",
        "WEB_THREADS": environ.get("WEB_THREADS", "8"),
    }


def commands() -> dict[str, list]:
    """The Procfile's web line, and its worker line running beat too: one process fewer on a
    laptop, where one worker is all there is (production runs beat on its own)."""
    return {
        "web": stack.command("web", bin_dir=BIN),
        "worker": [*stack.command("worker", bin_dir=BIN), "--beat"],
    }


RESTART_DELAYS = [1, 2, 4, 8, 16, 30]  # seconds before each restart in a row, then every 30 s
STABLE_SECONDS = 60  # a process that ran this long starts again from the first delay


class Supervisor:
    """Keeps the web server and the worker running: one that exits is started again after a
    growing delay, so a crash costs seconds, not the whole service, and a process that can
    never start does not spin."""

    def __init__(self, commands: dict[str, list], delays=RESTART_DELAYS, stable=STABLE_SECONDS):
        self.commands, self.delays, self.stable = commands, delays, stable
        self.processes: dict[str, subprocess.Popen | None] = dict.fromkeys(commands)
        self.started_at: dict[str, float] = {}
        self.failures = dict.fromkeys(commands, 0)
        self.restart_at = dict.fromkeys(commands, 0.0)

    def step(self, now: float) -> None:
        """Start what is due, and schedule the restart of what exited."""
        for name, process in self.processes.items():
            if process is None and now >= self.restart_at[name]:
                command = [str(part) for part in self.commands[name]]
                self.processes[name] = subprocess.Popen(command, cwd=ROOT)
                self.started_at[name] = now
            elif process is not None and process.poll() is not None:
                ran = now - self.started_at[name]
                self.failures[name] = 0 if ran >= self.stable else self.failures[name] + 1
                delay = self.delays[min(self.failures[name], len(self.delays) - 1)]
                print(f"{name} exited with {process.returncode}; starting it again in "
                      f"{delay}s.", flush=True)
                self.processes[name], self.restart_at[name] = None, now + delay

    def stop(self) -> None:
        running = [process for process in self.processes.values() if process is not None]
        for process in running:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in running:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def supervise(commands: dict[str, list], local: str, base_url: str,
              timeout: float = 300) -> int:
    """Run and restart the processes until Ctrl+C (or SIGTERM), then stop them all. Fails
    (1) when the web server exits before it answers at ``local``."""
    stopping = False

    def stop(*_args) -> None:
        nonlocal stopping
        stopping = True

    previous = {number: signal.signal(number, stop) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        return run_supervised(Supervisor(commands), local, base_url, timeout, lambda: stopping)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def run_supervised(supervisor: Supervisor, local: str, base_url: str, timeout: float,
                   stopping) -> int:
    supervisor.step(time.monotonic())
    if not came_up(supervisor, local, timeout, stopping):
        supervisor.stop()
        return 0 if stopping() else 1
    print(banner(base_url, os.environ), flush=True)
    while not stopping():
        supervisor.step(time.monotonic())
        time.sleep(0.5)
    supervisor.stop()
    return 0


def banner(base_url: str, environ: dict | os._Environ) -> str:
    """What a newcomer needs from the first screen, each on a line of its own, so it is not
    lost among the processes' log lines."""
    lines = [f"FormFlow is running on {base_url} (API docs: {base_url}/api/docs/). "
             "Ctrl+C stops it."]
    if not environ.get("EMAIL_HOST"):
        lines.append("Account codes (sign-up, password reset) are printed in this terminal: "
                     "look for the lines with 'Subject: Your FormFlow'.")
    if environ.get("WEBHOOK_ALLOW_PRIVATE_NETWORKS", "").lower() not in ("1", "true", "yes", "on"):
        lines.append("Webhooks to this machine (http://127.0.0.1/...) are refused; for "
                     "development, start with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.")
    return "\n" + "\n".join(lines) + "\n"


def came_up(supervisor: Supervisor, local: str, timeout: float, stopping) -> bool:
    """Wait until the web server answers /healthz; False, said loudly, if it exits first."""
    web = supervisor.processes["web"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stopping():
        if web is not None and web.poll() is not None:
            print(f"\nThe web server exited with {web.returncode} before it answered (its "
                  "output is above); FormFlow is not running.", file=sys.stderr, flush=True)
            return False
        if stack.probe(local + "/healthz")[0] == 200:
            return True
        time.sleep(0.3)
    if not stopping():
        print(f"\nThe web server did not answer {local}/healthz within {timeout:.0f} s; "
              "FormFlow is not running.", file=sys.stderr, flush=True)
    return False


def test(extra: list[str]) -> int:
    dev_bin = install(DEV_VENV, "requirements-dev.txt")
    run(dev_bin / "ruff", "check", ".")
    run(dev_bin / "mypy")  # its settings, and what it checks, are in pyproject.toml
    return subprocess.run([str(dev_bin / "pytest"), *extra], cwd=ROOT).returncode


def port_argument(argv: list[str]) -> int:
    if "--port" not in argv:
        return 8000
    value = argv[argv.index("--port") + 1] if argv.index("--port") + 1 < len(argv) else ""
    if not value.isdigit() or not 0 < int(value) < 65536:
        sys.exit(f"--port needs a port number (1-65535), not {value!r}.")
    return int(value)


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 (dev.py runs on whatever python3 is)
        sys.exit("FormFlow needs Python 3.11 or newer.")
    command = argv[0] if argv else ""
    if command == "start":
        return start(port_argument(argv))
    if command == "test":
        return test(argv[1:])
    if command == "install":
        install(RUNTIME_VENV, "requirements.txt")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except subprocess.CalledProcessError as error:
        sys.exit(error.returncode or 1)
