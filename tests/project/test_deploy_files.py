"""The deployment files agree with the Procfile and the settings: compose runs the image's
web, worker and beat with PostgreSQL and Redis, the image is non-root and built from the
runtime lock alone, and .env.example lists every setting the configuration page documents."""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import procfile  # noqa: E402


def test_compose_runs_web_worker_and_beat_from_the_image_with_postgres_and_redis():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"web", "worker", "beat", "postgres", "redis"}
    # A restart must be a flush for the monthly limit's fence: nothing kept on disk.
    assert services["redis"]["command"] == ["redis-server", "--save", "", "--appendonly", "no"]
    assert services["web"]["command"] == ["--migrate", "web"]
    assert services["worker"]["command"] == ["worker"]
    assert services["beat"]["command"] == ["beat"]
    for name in ("web", "worker", "beat"):
        service = services[name]
        assert service["build"]["dockerfile"] == "Containerfile"
        assert service["env_file"] == "formflow.env"
        assert service["environment"]["DATABASE_URL"].endswith("@postgres:5432/formflow")
        assert service["environment"]["REDIS_URL"] == "redis://redis:6379/0"
        assert service["restart"] == "unless-stopped"
        assert service["volumes"] == ["formflow-data:/var/lib/formflow"]
        # Every command is a Procfile line's name (after the entry point's --migrate).
        assert service["command"][-1] in procfile.entries()
    assert services["web"]["ports"] == ["127.0.0.1:${PORT:-8000}:8000"]
    # Containers are scheduled as groups, where nice does not reach: deliveries take what the
    # web leaves by their share, the lowest there is.
    assert services["worker"]["cpu_shares"] == 2
    assert "cpu_shares" not in services["web"]


def test_the_image_is_non_root_from_the_runtime_lock_and_runs_the_procfile():
    text = (ROOT / "Containerfile").read_text()
    assert "ARG BASE_IMAGE=docker.io/library/python:3.11-slim\nFROM ${BASE_IMAGE}\n" in text
    assert "pip install --no-cache-dir --require-hashes -r requirements.txt" in text
    assert "requirements-dev" not in text
    assert re.search(r"^USER formflow$", text, re.M)
    assert 'ENTRYPOINT ["python", "scripts/procfile.py", "run"]' in text
    assert 'CMD ["web"]' in text


def documented_settings() -> set[str]:
    text = (ROOT / "docs" / "configuration.md").read_text()
    names = set()
    for row in re.findall(r"^\| (`[A-Z].*?) \|", text, re.M):
        names.update(re.findall(r"`([A-Z][A-Z0-9_]+)`", row))
    return names


def test_env_example_lists_every_documented_setting_and_every_procfile_variable():
    example = (ROOT / ".env.example").read_text()
    listed = set(re.findall(r"^#?([A-Z][A-Z0-9_]+)=", example, re.M))
    procfile_variables = set(re.findall(r"\$\{(\w+)", " ".join(procfile.entries().values())))
    assert procfile_variables <= documented_settings()
    assert documented_settings() - listed == set()
    # and nothing that is not a setting (compose's POSTGRES_PASSWORD lives in its own .env)
    assert listed - documented_settings() == set()


# Variables the code reads that are not an operator's settings, each with why.
NOT_SETTINGS: dict[str, str] = {}


def variables_the_code_reads() -> set[str]:
    """Every variable name config/settings.py hands to config.env (the only reader of the
    environment) or to its own _key()."""
    # config.env's readers are its functions whose first parameter is the variable's name.
    env_module = ast.parse((ROOT / "config" / "env.py").read_text())
    readers = {node.name for node in env_module.body if isinstance(node, ast.FunctionDef)
               and node.args.args and node.args.args[0].arg == "name"}
    assert {"string", "optional", "boolean", "integer", "export_default"} <= readers
    tree = ast.parse((ROOT / "config" / "settings.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        function = node.func
        reads = (isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name)
                 and function.value.id == "env" and function.attr in readers) or (
                     isinstance(function, ast.Name) and function.id == "_key")
        first = node.args[0]
        if reads and isinstance(first, ast.Constant) and isinstance(first.value, str):
            names.add(first.value)
    return names


def test_every_variable_the_code_reads_is_documented_and_in_env_example():
    read = variables_the_code_reads()
    assert {"SECRET_KEY", "DATABASE_URL", "LOG_FORMAT", "PROMETHEUS_MULTIPROC_DIR"} <= read
    example = set(re.findall(r"^#?([A-Z][A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.M))
    settings = read - set(NOT_SETTINGS)
    assert settings - documented_settings() == set(), "missing from docs/configuration.md"
    assert settings - example == set(), "missing from .env.example"


def test_the_caddyfile_forwards_to_the_web_unit():
    text = (ROOT / "deploy" / "Caddyfile").read_text()
    assert "reverse_proxy {$FORMFLOW_UPSTREAM:127.0.0.1:8000}" in text
    web = procfile.command("web", env={})
    assert web[web.index("--bind") + 1] == "127.0.0.1:8000"


def ignored(path: str, patterns: list[str]) -> bool:
    """Whether a build context path is left out, as Docker and podman read an ignore file:
    patterns in order, the last match wins (``!`` keeps), a folder's pattern covers its
    content, ``**/`` is any depth."""
    verdict = False
    parts = path.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    for pattern in patterns:
        keep = pattern.startswith("!")
        pattern = pattern.lstrip("!").strip("/")
        candidates = [pattern, pattern.removeprefix("**/")]
        anywhere = pattern.startswith("**/")
        for prefix in prefixes:
            names = [prefix] + (["/".join(prefix.split("/")[n:]) for n in range(1, 9)]
                                if anywhere else [])
            if any(fnmatch.fnmatchcase(name, glob) for name in names for glob in candidates):
                verdict = not keep
                break
    return verdict


def test_the_build_context_leaves_out_secrets_local_data_venvs_and_leftovers():
    # Docker reads .dockerignore (Containerfile.dockerignore first, if there were one); podman
    # and buildah read .containerignore first, then .dockerignore. One file serves both.
    assert not (ROOT / ".containerignore").exists()
    assert not (ROOT / "Containerfile.dockerignore").exists()
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    for path in (".env", ".env.local", "deploy/formflow.env", "var/secret_key",
                 "var/fernet_key", "var/db.sqlite3", ".venv/bin/python",
                 ".venv-dev/bin/python", ".venv-bench/bin/python", ".git/config",
                 "node_modules/axe-core/axe.min.js", "tests/node_modules/x.js",
                 "test-artifacts/smoke.log", "accounts/__pycache__/models.cpython-311.pyc",
                 ".mypy_cache/x", ".pytest_cache/x", ".hypothesis/x"):
        assert ignored(path, patterns), path
    for path in ("manage.py", "Procfile", "requirements.txt", "scripts/procfile.py",
                 "config/settings.py", "templates/base.html", ".env.example"):
        assert not ignored(path, patterns), path


def test_git_ignores_the_environment_file():
    patterns = [line for line in (ROOT / ".gitignore").read_text().splitlines()
                if line and not line.startswith("#")]
    assert ignored(".env", patterns)
    assert ignored("formflow.env", patterns)
    assert not ignored(".env.example", patterns)


# --- Deployment files as an SRE reads them (contract, "Operations") --------------------------

WORKER_STOP_SECONDS = 20  # the worker's default stop time (docs/operating.md)


def compose_services() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]


def seconds(duration: str) -> int:
    """A compose duration such as ``30s`` or ``1m30s``."""
    units = {"h": 3600, "m": 60, "s": 1}
    return sum(int(amount) * units[unit] for amount, unit in re.findall(r"(\d+)([hms])", duration))


def test_compose_checks_health_and_starts_in_order_of_health():
    services = compose_services()
    assert "/readyz" in (ROOT / "scripts" / "healthcheck.py").read_text()
    assert services["web"]["healthcheck"]["test"] == ["CMD", "python", "scripts/healthcheck.py"]
    assert "pg_isready" in services["postgres"]["healthcheck"]["test"]
    assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    healthy = {"condition": "service_healthy"}
    for name in ("web", "worker", "beat"):
        depends = services[name]["depends_on"]
        assert depends["postgres"] == healthy and depends["redis"] == healthy, name
    # The web migrates the database before it serves: the others wait until it is ready.
    assert services["worker"]["depends_on"]["web"] == healthy
    assert services["beat"]["depends_on"]["web"] == healthy


def test_compose_gives_the_worker_longer_than_its_stop_time():
    services = compose_services()
    assert seconds(services["worker"]["stop_grace_period"]) > WORKER_STOP_SECONDS
    assert seconds(services["web"]["stop_grace_period"]) >= 30  # gunicorn's graceful timeout


def test_the_database_password_reaches_the_app_only_in_its_database_url():
    services = compose_services()
    for name in ("web", "worker", "beat"):
        environment = services[name]["environment"]
        assert "POSTGRES_PASSWORD" not in environment, name
        assert "${POSTGRES_PASSWORD" in environment["DATABASE_URL"]
        # The app's own file is not compose's .env (which holds the password).
        assert services[name]["env_file"] != ".env"
    assert "POSTGRES_PASSWORD" not in (ROOT / ".env.example").read_text()


def test_the_healthcheck_asks_readyz_as_the_proxy_does(monkeypatch):
    import healthcheck

    asked = {}

    def probe(url, headers=None, context=None):
        asked.update(url=url, headers=headers)
        return 503, {"status": "unavailable", "checks": {"database": {"ok": False},
                                                          "storage": {"ok": True}}}

    monkeypatch.setattr(healthcheck.stack, "probe", probe)
    monkeypatch.setenv("BASE_URL", "https://forms.example.com")
    monkeypatch.setenv("PORT", "8000")

    assert healthcheck.main() == 1
    assert asked == {"url": "http://127.0.0.1:8000/readyz",
                     "headers": {"Host": "forms.example.com", "X-Forwarded-Proto": "https"}}


def caddy_site() -> str:
    text = (ROOT / "deploy" / "Caddyfile").read_text()
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def test_the_caddyfile_rides_a_web_restart_and_keeps_an_access_log():
    site = caddy_site()
    proxy = re.search(r"reverse_proxy \S+ \{(.*?)\}", site, re.S)
    assert proxy, "reverse_proxy needs a block with its retry settings"
    options = dict(line.split(None, 1) for line in proxy[1].strip().splitlines())
    assert seconds(options["lb_try_duration"]) >= 10  # a web restart takes a few seconds
    assert options["lb_try_interval"].endswith("ms")
    assert re.search(r"^\tlog \{", site, re.M), "an access log, in the site block"


def unit_settings(name: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    text = (ROOT / "deploy" / "systemd" / f"formflow-{name}.service").read_text()
    for line in text.splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            found.setdefault(key, []).append(value)
    return found


def test_migrations_run_in_a_unit_with_a_start_timeout_of_their_own():
    migrate = unit_settings("migrate")
    assert migrate["Type"] == ["oneshot"]
    assert migrate["ExecStart"] == ["/opt/formflow/.venv/bin/python manage.py migrate --no-input"]
    assert migrate["TimeoutStartSec"] == ["1h"]
    for name in ("web", "worker", "beat"):
        unit = unit_settings(name)
        assert unit["Requires"] == ["formflow-migrate.service"], name
        assert "formflow-migrate.service" in unit["After"][0].split(), name
        assert "ExecStartPre" not in unit, name


def test_the_worker_unit_gives_it_longer_than_its_stop_time():
    worker = unit_settings("worker")
    assert int(worker["TimeoutStopSec"][0]) > WORKER_STOP_SECONDS
    assert worker["KillMode"] == ["mixed"]  # SIGTERM to Celery's main process first


def docs_compose_commands() -> list[list[str]]:
    text = (ROOT / "docs" / "deploy.md").read_text()
    blocks = re.findall(r"^```sh\n(.*?)```", text, re.DOTALL | re.M)
    return [line.split() for block in blocks for line in block.splitlines()
            if line.startswith("docker compose ")]


def test_the_docs_compose_commands_fit_compose():
    """Each `docker compose` command of docs/deploy.md names services compose.yaml has, and a
    `manage.py` command that exists (compose itself cannot run in CI)."""
    from django.core.management import get_commands

    services = set(compose_services())
    found = docs_compose_commands()
    assert {words[2] for words in found} >= {"exec", "run", "up", "build"}
    for words in found:
        rest = words[3:words.index("manage.py")] if "manage.py" in words else words[3:]
        # Flags, and the value of the one flag that takes one here.
        named = [word for n, word in enumerate(rest) if not word.startswith("-")
                 and rest[n - 1] != "--entrypoint" and word != "python"]
        assert set(named) <= services, words
        if "manage.py" in words:
            assert words[words.index("manage.py") + 1] in get_commands(), words
    # --wait needs health checks on what it waits for.
    for words in found:
        if "--wait" in words:
            for name in words[words.index("--wait") + 1:]:
                assert "healthcheck" in compose_services()[name], name
