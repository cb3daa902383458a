#!/usr/bin/env python3
"""Install and run FormFlow on a fresh machine with nothing but Python 3.11+.

    python3 dev.py start   # install, migrate, then web server + Celery worker + beat
    python3 dev.py test    # install, then ruff and the whole test suite

Everything is installed into .venv from requirements*.txt; a re-run installs only when those
files changed. Standard library only, because it runs before anything is installed.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"


def run(*args: str | Path) -> None:
    subprocess.run([str(arg) for arg in args], cwd=ROOT, check=True)


def install(requirements: str) -> None:
    if not PYTHON.exists():
        print(f"Creating {VENV.name} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    files = sorted(ROOT.glob("requirements*.txt"))
    digest = hashlib.sha256(b"".join(path.read_bytes() for path in files)).hexdigest()
    stamp = VENV / f".installed-{requirements}"
    if stamp.exists() and stamp.read_text() == digest:
        return
    print(f"Installing {requirements} ...", flush=True)
    run(
        PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", requirements
    )
    stamp.write_text(digest)


def start(port: str) -> int:
    install("requirements.txt")
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
    install("requirements-dev.txt")
    run(BIN / "ruff", "check", ".")
    return subprocess.run([str(BIN / "pytest"), *extra], cwd=ROOT).returncode


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 (dev.py runs on whatever python3 is)
        sys.exit("FormFlow needs Python 3.11 or newer.")
    command = argv[0] if argv else ""
    if command == "start":
        port = argv[argv.index("--port") + 1] if "--port" in argv else "8000"
        return start(port)
    if command == "test":
        return test(argv[1:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except subprocess.CalledProcessError as error:
        sys.exit(error.returncode or 1)
