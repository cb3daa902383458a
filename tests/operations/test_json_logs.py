"""LOG_FORMAT=json holds for every process the Procfile starts: the web server (gunicorn's
own lines and the access log) and Celery's beat and worker, not only Django's loggers."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import procfile  # noqa: E402
import stack  # noqa: E402

BIN = Path(sys.executable).parent


@pytest.fixture
def environment(tmp_path):
    """The embedded setup (SQLite, the filesystem broker) in a folder of its own."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL",
                           "DJANGO_SETTINGS_MODULE")}
    return {**env, "DATA_DIR": str(tmp_path), "LOG_FORMAT": "json", "WEB_CONCURRENCY": "1",
            "PORT": str(stack.free_port()), "BIND_HOST": "127.0.0.1"}


def run(name: str, env: dict, tmp_path: Path, while_running) -> tuple[str, str]:
    out, err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(procfile.command(name, env=env, bin_dir=BIN), cwd=ROOT,
                                   env=env, stdout=stdout, stderr=stderr,
                                   start_new_session=True)
        try:
            while_running()
        finally:
            # To the main process alone, as systemd's KillMode=mixed does (the units'), so a
            # worker stops its own pool.
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    return out.read_text(), err.read_text()


def entries(text: str) -> list[dict]:
    """Every line of ``text`` as JSON (a line that is not fails the test, naming it)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_the_web_servers_own_lines_and_its_access_log_are_json(environment, tmp_path):
    base = f"http://127.0.0.1:{environment['PORT']}"

    def visit():
        stack.wait_for_answer(f"{base}/healthz", timeout=60)
        urllib.request.urlopen(f"{base}/healthz?probe=1", timeout=10).read()
        time.sleep(0.5)

    out, err = run("web", environment, tmp_path, visit)

    access = [entry for entry in entries(out) if entry["logger"] == "uvicorn.access"]
    assert any('"GET /healthz HTTP/1.1" 200' in entry["message"] for entry in access)
    assert not any("probe=1" in entry["message"] for entry in access)
    logged = entries(err)
    assert any(entry["logger"].startswith("gunicorn") for entry in logged)
    assert all(entry["time"].endswith("Z") for entry in logged)


def test_beats_log_lines_are_json(environment, tmp_path):
    _out, err = run("beat", environment, tmp_path, lambda: time.sleep(6))

    logged = entries(err)  # the banner Celery prints goes to standard output, not the log
    assert any(entry["logger"] == "celery.beat" for entry in logged)
    assert {entry["level"] for entry in logged} <= {"DEBUG", "INFO", "WARNING", "ERROR"}


def test_a_workers_log_lines_are_json(environment, tmp_path):
    environment = {**environment, "WORKER_CONCURRENCY": "1"}
    _out, err = run("worker", environment, tmp_path, lambda: time.sleep(8))

    logged = entries(err)
    assert any("ready" in entry["message"] for entry in logged)
