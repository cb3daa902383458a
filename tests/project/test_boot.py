"""What the service guarantees when a process starts: shared keys in production, a private
data folder, and mail settings that cannot contradict each other."""

import os
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNREACHABLE_DB = "postgres://nobody@127.0.0.1:9/formflow"
FERNET_KEY = "dGVzdC1vbmx5LWZlcm5ldC1rZXktMzItYnl0ZXMhISE="

ENTRY_POINTS = {
    "manage.py": ["manage.py", "check"],
    "wsgi": ["-c", "import config.wsgi"],
    "celery": ["-c", "import config.celery"],
}


def start(tmp_path: Path, args: list[str], **env: str) -> subprocess.CompletedProcess:
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in {"SECRET_KEY", "FIELD_ENCRYPTION_KEYS", "DEBUG", "DATABASE_URL"}
    }
    environment.update({"DJANGO_SETTINGS_MODULE": "config.settings", "DATA_DIR": str(tmp_path)})
    environment.update(env)
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_production_refuses_to_start_without_a_shared_secret_key(tmp_path, entry):
    result = start(
        tmp_path, ENTRY_POINTS[entry], DATABASE_URL=UNREACHABLE_DB, FIELD_ENCRYPTION_KEYS=FERNET_KEY
    )

    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "FormFlow cannot start: SECRET_KEY must be set: with DATABASE_URL set and DEBUG off, "
        "every machine must share it"
    ]
    assert not (tmp_path / "secret_key").exists()


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_production_refuses_to_start_without_shared_encryption_keys(tmp_path, entry):
    result = start(
        tmp_path, ENTRY_POINTS[entry], DATABASE_URL=UNREACHABLE_DB, SECRET_KEY="k" * 64
    )

    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("FormFlow cannot start: FIELD_ENCRYPTION_KEYS must be set")
    assert not (tmp_path / "fernet_key").exists()


def test_production_starts_once_both_keys_are_set(tmp_path):
    result = start(
        tmp_path,
        ENTRY_POINTS["manage.py"],
        DATABASE_URL=UNREACHABLE_DB,
        SECRET_KEY=secrets.token_urlsafe(64),
        FIELD_ENCRYPTION_KEYS=FERNET_KEY,
    )

    assert result.returncode == 0, result.stderr


def test_debug_with_a_database_may_generate_its_keys(tmp_path):
    result = start(tmp_path, ENTRY_POINTS["manage.py"], DATABASE_URL=UNREACHABLE_DB, DEBUG="on")

    assert result.returncode == 0, result.stderr
    assert (tmp_path / "secret_key").exists()


def test_the_embedded_setup_generates_its_keys_into_a_private_folder(tmp_path):
    data_dir = tmp_path / "data"

    result = start(tmp_path, ["manage.py", "migrate", "--no-input"], DATA_DIR=str(data_dir))

    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    files = [path for path in data_dir.rglob("*") if path.is_file()]
    assert {"secret_key", "fernet_key", "db.sqlite3"} <= {path.name for path in files}
    assert {stat.S_IMODE(path.stat().st_mode) for path in files} == {0o600}
    folders = [path for path in data_dir.rglob("*") if path.is_dir()]
    assert folders  # the broker's folders
    assert {stat.S_IMODE(path.stat().st_mode) for path in folders} == {0o700}


def test_a_data_folder_left_open_is_made_private_at_start(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o755)
    loose = data_dir / "secret_key"
    loose.write_text(secrets.token_urlsafe(64))
    loose.chmod(0o644)

    result = start(tmp_path, ENTRY_POINTS["manage.py"], DATA_DIR=str(data_dir))

    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(loose.stat().st_mode) == 0o600


def test_starttls_and_implicit_tls_at_once_is_refused(tmp_path):
    result = start(
        tmp_path,
        ENTRY_POINTS["manage.py"],
        EMAIL_HOST="smtp.example.com",
        EMAIL_USE_TLS="on",
        EMAIL_USE_SSL="on",
    )

    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "FormFlow cannot start: EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be on: choose one"
    ]


def test_the_embedded_database_writes_ahead_to_a_log(tmp_path):
    script = "from django.db import connection; c = connection.cursor(); " + (
        "c.execute('PRAGMA journal_mode'); print(c.fetchone()[0]); "
        "c.execute('PRAGMA synchronous'); print(c.fetchone()[0])"
    )

    result = start(tmp_path, ["manage.py", "shell", "-c", script])

    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] == ["wal", "1"]  # synchronous=NORMAL


# --- Wrong settings stop every process's start (contract, "Operations") -----------------------

sys.path.insert(0, str(ROOT / "scripts"))
import procfile  # noqa: E402

BIN = Path(sys.executable).parent
WRONG_SETTINGS = {
    "BASE_URL": ({"BASE_URL": "forms.example.com"},
                 "BASE_URL must be an absolute http(s) URL such as https://forms.example.com, "
                 "got 'forms.example.com'"),
    "DATABASE_URL": ({"DATABASE_URL": "mysql://formflow@127.0.0.1/formflow"},
                     "DATABASE_URL must start with postgres:// or postgresql:// or sqlite://, "
                     "got mysql://"),
    "REDIS_URL": ({"REDIS_URL": "memcached://127.0.0.1:11211"},
                  "REDIS_URL must start with redis:// or rediss:// or unix://, got memcached://"),
    "DEBUG": ({"DEBUG": "on", "BASE_URL": "https://forms.example.com"},
              "DEBUG must be off when BASE_URL is https (a public site)"),
}


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def process_environment(tmp_path: Path, **env: str) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items()
                   if key not in {"DEBUG", "DATABASE_URL", "REDIS_URL", "BASE_URL",
                                  "DJANGO_SETTINGS_MODULE"}}
    environment.update(DATA_DIR=str(tmp_path), PORT=str(free_port()), SECRET_KEY="k" * 64,
                       FIELD_ENCRYPTION_KEYS=FERNET_KEY, WEB_CONCURRENCY="2")
    environment.update(env)
    return environment


# Besides the Procfile's lines: manage.py, and the container image's entry for compose's web.
OTHER_ENTRIES = {"manage.py": ["manage.py", "check"],
                 "image web": ["scripts/procfile.py", "run", "--migrate", "web"]}


def run_process(name: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """The Procfile's ``name`` line as the units run it, or one of OTHER_ENTRIES."""
    words = ([sys.executable, *OTHER_ENTRIES[name]] if name in OTHER_ENTRIES
             else procfile.command(name, env=env, bin_dir=BIN))
    return subprocess.run(words, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("process", ["manage.py", "web", "worker", "beat", "image web"])
@pytest.mark.parametrize("variable", WRONG_SETTINGS)
def test_a_wrong_setting_stops_the_start_with_one_line_naming_it(tmp_path, process, variable):
    wrong, said = WRONG_SETTINGS[variable]

    result = run_process(process, process_environment(tmp_path, **wrong))

    assert result.returncode != 0
    assert result.stderr.splitlines() == [f"FormFlow cannot start: {said}"]
    assert "Traceback" not in result.stdout


def test_a_web_process_whose_workers_cannot_load_the_app_exits(tmp_path):
    """The settings load, but loading the app ends each worker (here an app that exits at
    import): gunicorn's master stops, instead of starting workers again and again."""
    (tmp_path / "settings_that_exit.py").write_text(
        "from config.settings import *  # noqa\n"
        "INSTALLED_APPS = [*INSTALLED_APPS, 'exits_at_import']\n")
    (tmp_path / "exits_at_import.py").write_text("raise SystemExit('this app cannot load')\n")
    env = process_environment(tmp_path, PYTHONPATH=str(tmp_path),
                              DJANGO_SETTINGS_MODULE="settings_that_exit")

    result = run_process("web", env)

    assert result.returncode != 0
    assert "this app cannot load" in result.stderr
    assert result.stderr.count("Booting worker") <= 2  # WEB_CONCURRENCY, never a restart
