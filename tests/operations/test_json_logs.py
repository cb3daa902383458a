"""LOG_FORMAT=json holds for every process the Procfile starts: the web server (gunicorn's
own lines and the access log) and Celery's beat and worker, not only Django's loggers."""

import json
import time
import urllib.request
from pathlib import Path

import pytest

from tests.operations.processes import stack, started


@pytest.fixture
def environment(embedded_environment):
    return {**embedded_environment, "LOG_FORMAT": "json", "WEB_CONCURRENCY": "1",
            "PORT": str(stack.free_port()), "BIND_HOST": "127.0.0.1"}


def run(name: str, env: dict, tmp_path: Path, while_running) -> tuple[str, str]:
    out, err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
    with out.open("wb") as stdout, err.open("wb") as stderr, started(name, env, stdout, stderr):
        while_running()
    return out.read_text(), err.read_text()


def until_logged(path_of, words: str, timeout: float = 60):
    """Wait while the process runs until its log holds ``words`` (a fixed sleep is too short
    for a nice-19 process on a busy machine, and too long on an idle one)."""
    def wait():
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and words not in path_of().read_text():
            time.sleep(0.2)
        time.sleep(0.5)  # the rest of what it logs at start
    return wait


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
    _out, err = run("beat", environment, tmp_path,
                    until_logged(lambda: tmp_path / "beat.err", "celery.beat"))

    logged = entries(err)  # the banner Celery prints goes to standard output, not the log
    assert any(entry["logger"] == "celery.beat" for entry in logged)
    assert {entry["level"] for entry in logged} <= {"DEBUG", "INFO", "WARNING", "ERROR"}


def test_a_workers_log_lines_are_json(environment, tmp_path):
    environment = {**environment, "WORKER_CONCURRENCY": "1"}
    _out, err = run("worker", environment, tmp_path,
                    until_logged(lambda: tmp_path / "worker.err", "ready"))

    logged = entries(err)
    assert any("ready" in entry["message"] for entry in logged)
