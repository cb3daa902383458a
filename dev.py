#!/usr/bin/env python3
"""Install and run FormFlow on a fresh machine with nothing but Python 3.11+.

    python3 dev.py start   # install, migrate, then web server + Celery worker + beat
    python3 dev.py test    # install, then ruff and the whole test suite
    python3 dev.py install # only make .venv (what the benchmarks run)

start runs from .venv, made from the runtime lock requirements.txt alone; test uses .venv-dev,
made from requirements-dev.txt. A venv is made again only when its lock changed. Standard
library only, because it runs before anything is installed.
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


def start(port: str) -> int:
    install(RUNTIME_VENV, "requirements.txt")
    run(PYTHON, "manage.py", "migrate", "--no-input")
    # Without REDIS_URL the rate-limit counters live in one process's memory, so the
    # embedded setup serves from a single process with threads.
    web_processes = "2" if os.environ.get("REDIS_URL") else "1"
    commands = {
        "web": [
            BIN / "gunicorn",
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            web_processes,
            "--threads",
            "8",
            "--access-logfile",
            "-",
        ],
        "worker": [
            BIN / "celery",
            "-A",
            "config",
            "worker",
            "--beat",
            "--loglevel",
            "INFO",
            "--concurrency",
            "2",
        ],
    }
    children = {
        name: subprocess.Popen([str(part) for part in command], cwd=ROOT)
        for name, command in commands.items()
    }
    print(
        f"\nFormFlow is running on http://localhost:{port} (API docs: /api/docs/). "
        "Ctrl+C stops it.\n",
        flush=True,
    )
    return supervise(children)


def supervise(children: dict[str, subprocess.Popen]) -> int:
    """Wait until Ctrl+C or until one process exits, then stop the others."""
    stopping = False

    def stop(*_args) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    exit_code = 0
    while not stopping:
        for name, child in children.items():
            if child.poll() is not None:
                print(f"{name} exited with {child.returncode}; stopping.", flush=True)
                exit_code, stopping = child.returncode or 1, True
        time.sleep(0.5)
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    for child in children.values():
        try:
            child.wait(timeout=20)
        except subprocess.TimeoutExpired:
            child.kill()
    return exit_code


def test(extra: list[str]) -> int:
    dev_bin = install(DEV_VENV, "requirements-dev.txt")
    run(dev_bin / "ruff", "check", ".")
    return subprocess.run([str(dev_bin / "pytest"), *extra], cwd=ROOT).returncode


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 (dev.py runs on whatever python3 is)
        sys.exit("FormFlow needs Python 3.11 or newer.")
    command = argv[0] if argv else ""
    if command == "start":
        port = argv[argv.index("--port") + 1] if "--port" in argv else "8000"
        return start(port)
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
