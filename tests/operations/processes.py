"""Starting a Procfile process as the units do, for the tests that watch one run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import procfile  # noqa: E402
import stack  # noqa: E402, F401  (scripts/stack.py, for the tests that take ports from it)

BIN = Path(sys.executable).parent


@contextmanager
def started(name: str, env: dict, stdout: IO | int = subprocess.DEVNULL,
            stderr: IO | int = subprocess.DEVNULL) -> Iterator[subprocess.Popen]:
    """The Procfile's ``name`` line, in a session of its own (as a systemd unit runs it),
    stopped on leaving: SIGTERM to the main process alone, as systemd's KillMode=mixed does
    (the units'), so a worker stops its own pool."""
    process = subprocess.Popen(procfile.command(name, env=env, bin_dir=BIN), cwd=ROOT, env=env,
                               stdout=stdout, stderr=stderr, start_new_session=True)
    try:
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
