"""dev.py start --port P: the port reaches BASE_URL and the web command line, a taken port
fails at once with a clear message, and a web server that cannot start is never announced as
running."""

import socket
import subprocess
import sys
from pathlib import Path

import dev

ROOT = Path(__file__).resolve().parents[2]
CRASH = [sys.executable, "-c", "import sys; sys.exit(3)"]
SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]


def test_the_port_follows_through_to_base_url_and_the_web_command():
    env = dev.start_environment(18531, {})
    assert env["BASE_URL"] == "http://localhost:18531"
    assert env["PORT"] == "18531"
    web = dev.stack.command("web", env=env)
    assert web[web.index("--bind") + 1] == "127.0.0.1:18531"


def test_an_explicit_base_url_is_kept():
    env = dev.start_environment(18532, {"BASE_URL": "https://forms.example.com"})
    assert env["BASE_URL"] == "https://forms.example.com"


def test_without_redis_one_web_process_serves_and_the_worker_runs_beat(monkeypatch):
    assert dev.start_environment(18533, {"WEB_CONCURRENCY": "4"})["WEB_CONCURRENCY"] == "1"
    with_redis = dev.start_environment(18533, {"REDIS_URL": "redis://127.0.0.1:6379/5"})
    assert with_redis["WEB_CONCURRENCY"] == "2"
    monkeypatch.setattr(dev.os, "environ", {})
    commands = dev.commands()
    assert commands["worker"][-1] == "--beat"
    assert commands["worker"][1:4] == ["-A", "config", "worker"]


def test_a_taken_port_fails_loudly_before_anything_starts():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "dev.py", "start", "--port", str(port)],
                                cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert f"Port {port} is in use" in result.stderr
    assert "running" not in result.stdout


def test_a_port_whose_server_just_stopped_is_free():
    """After Ctrl+C the server's closed connections sit in TIME_WAIT for a minute; they do
    not listen, so the port is free. Linux lets a new bind share the port with them only when
    both sockets set SO_REUSEADDR; gunicorn's listener does, as this stand-in does."""
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = server.accept()
        accepted.close()  # the server's side closes first, so its end waits in TIME_WAIT
        client.close()
    assert not dev.stack.port_taken(port)
    with socket.socket() as listening:  # a server on every address still counts
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(("0.0.0.0", port))
        listening.listen()
        assert dev.stack.port_taken(port)


def test_a_bad_port_is_refused():
    result = subprocess.run([sys.executable, "dev.py", "start", "--port", "http"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "--port needs a port number" in result.stderr


def test_a_web_server_that_exits_at_start_is_not_announced(capsys):
    port = dev.stack.free_port()
    code = dev.supervise({"web": CRASH, "worker": SLEEP}, f"http://127.0.0.1:{port}",
                         "http://localhost:1", timeout=30)
    out, err = capsys.readouterr()
    assert code == 1
    assert "The web server exited with 3 before it answered" in err
    assert "is running" not in out


def test_the_web_server_counts_as_up_once_it_answers_healthz(tmp_path):
    (tmp_path / "healthz").write_text("ok")
    port = dev.stack.free_port()
    server = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory",
              str(tmp_path), str(port)]
    supervisor = dev.Supervisor({"web": server})
    supervisor.step(0)
    try:
        assert dev.came_up(supervisor, f"http://127.0.0.1:{port}", 30, lambda: False)
    finally:
        supervisor.stop()


def test_the_banner_says_where_codes_appear_and_how_to_allow_local_webhooks():
    lines = dev.banner("http://localhost:8100", {}).strip().splitlines()

    assert lines[0].startswith("FormFlow is running on http://localhost:8100")
    assert any("printed in this terminal" in line for line in lines)
    assert any("WEBHOOK_ALLOW_PRIVATE_NETWORKS=true" in line for line in lines)
    configured = dev.banner("http://x", {"EMAIL_HOST": "smtp", "WEBHOOK_ALLOW_PRIVATE_NETWORKS":
                                         "true"})
    assert configured.strip().splitlines() == [configured.strip()]
