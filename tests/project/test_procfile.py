"""The Procfile is the one place the process command lines live: its reader expands it as a
shell would, and the systemd units in deploy/ are what it generates."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import procfile

ROOT = Path(__file__).resolve().parents[2]


def test_the_procfile_has_web_worker_and_beat():
    assert list(procfile.entries()) == ["web", "worker", "beat"]


def test_defaults_apply_and_the_environment_overrides_them():
    default = procfile.command("web", env={})
    assert default[:4] == ["gunicorn", "config.asgi:application", "--worker-class",
                           "edge.worker.Worker"]
    assert default[default.index("--bind") + 1] == "127.0.0.1:8000"
    assert default[default.index("--workers") + 1] == "2"
    assert default[-4:-2] == ["--access-logfile", "-"]  # the access log is on in production
    assert default[-2:] == ["--logger-class", "edge.logs.Logger"]  # LOG_FORMAT=json reaches it

    chosen = procfile.command("web", env={"PORT": "18555", "WEB_CONCURRENCY": "3"})
    assert chosen[chosen.index("--bind") + 1] == "127.0.0.1:18555"
    assert chosen[chosen.index("--workers") + 1] == "3"


def test_the_reader_agrees_with_a_posix_shell(tmp_path):
    for name, line in procfile.entries().items():
        env = {"PATH": "/usr/bin:/bin", "PORT": "18556", "LOG_LEVEL": "WARNING"}
        shell = subprocess.run(["sh", "-c", f'for w in {line}; do printf "%s\\n" "$w"; done'],
                               env=env, capture_output=True, text=True, check=True)
        assert shell.stdout.splitlines() == procfile.command(name, env=env), name


def test_a_variable_without_a_default_must_be_set(tmp_path, monkeypatch):
    procfile_path = tmp_path / "Procfile"
    procfile_path.write_text("# a comment: not a line\nweb: serve --port $PORT\n")
    monkeypatch.setattr(procfile, "PROCFILE", procfile_path)

    assert procfile.command("web", env={"PORT": "1"}) == ["serve", "--port", "1"]
    with pytest.raises(procfile.ProcfileError, match="needs PORT"):
        procfile.command("web", env={})
    with pytest.raises(procfile.ProcfileError, match="no 'beat' line"):
        procfile.command("beat", env={})


def test_the_first_word_comes_from_the_bin_folder_when_it_is_there(tmp_path):
    (tmp_path / "celery").write_text("")
    assert procfile.command("beat", env={}, bin_dir=tmp_path)[0] == str(tmp_path / "celery")
    assert procfile.command("web", env={}, bin_dir=tmp_path)[0] == "gunicorn"


def test_the_systemd_units_are_the_ones_the_procfile_makes():
    generated = procfile.units()
    on_disk = {path.name: path.read_text()
               for path in (ROOT / "deploy" / "systemd").glob("*.service")}
    assert on_disk == generated, "run: python3 scripts/procfile.py units deploy/systemd"


def test_each_unit_runs_its_procfile_line_with_the_defaults_in_its_environment():
    web = procfile.units()["formflow-web.service"]
    assert ("ExecStart=/opt/formflow/.venv/bin/gunicorn config.asgi:application "
            "--worker-class edge.worker.Worker --config python:config.gunicorn "
            "--bind ${BIND_HOST}:${PORT} "
            "--workers ${WEB_CONCURRENCY} --threads ${WEB_THREADS} --access-logfile - "
            "--logger-class edge.logs.Logger\n") in web
    assert ('Environment="DATA_DIR=/var/lib/formflow" "BIND_HOST=127.0.0.1" "PORT=8000" '
            '"WEB_CONCURRENCY=2" "WEB_THREADS=4"\n') in web
    # The environment file comes after the defaults, so it overrides them.
    assert web.index("Environment=") < web.index("EnvironmentFile=/etc/formflow/formflow.env")
    for name in ("web", "worker", "beat"):
        text = procfile.units()[f"formflow-{name}.service"]
        for line in ("Restart=always", "User=formflow", "NoNewPrivileges=yes",
                     "ProtectSystem=strict", "ReadWritePaths=/var/lib/formflow",
                     "PrivateTmp=yes", "ProtectHome=yes"):
            assert f"\n{line}\n" in text, (name, line)


def test_show_prints_the_expanded_line():
    result = subprocess.run([sys.executable, "scripts/procfile.py", "show", "beat"], cwd=ROOT,
                            env={"PATH": "/usr/bin:/bin", "LOG_LEVEL": "DEBUG"},
                            capture_output=True, text=True, check=True)
    assert result.stdout.strip().endswith("celery -A config beat --loglevel DEBUG")


# --- deploy/formflow-manage: manage.py as the units run it -----------------------------------


def formflow_manage(env_file: Path, *arguments: str, given: str | None = None
                    ) -> subprocess.CompletedProcess:
    import getpass
    import os

    # The shell's own settings must not leak in: the process sees what a unit's would.
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
           "DATABASE_URL": "postgres://nobody@127.0.0.1:1/nothing", "DATA_DIR": "/nonexistent"}
    env = {**env, **{k: v for k, v in os.environ.items() if k == "LANG"}}
    return subprocess.run([str(ROOT / "deploy" / "formflow-manage"), "--env-file", str(env_file),
                           "--user", getpass.getuser(), *arguments],
                          env=env, input=given, capture_output=True, text=True, timeout=120)


def test_formflow_manage_runs_manage_py_with_the_environment_file(tmp_path):
    data = tmp_path / "data"
    env_file = tmp_path / "formflow.env"
    env_file.write_text(f"# as /etc/formflow/formflow.env\nDATA_DIR={data}\n"
                        "DEFAULT_FROM_EMAIL=FormFlow <no-reply@example.com>\n"
                        "REGISTRATION=\"closed\"\n")
    env_file.chmod(0o600)

    migrated = formflow_manage(env_file, "migrate", "--no-input", "-v0")
    assert migrated.returncode == 0, migrated.stderr
    assert (data / "db.sqlite3").exists()
    assert formflow_manage(env_file, "check").returncode == 0

    status = formflow_manage(env_file, "status")
    report = json.loads(status.stdout)
    assert report["checks"]["database"] == {"ok": True, "unappliedMigrations": 0}
    assert report["checks"]["beat"]["ok"] is False and status.returncode == 1  # no beat runs

    made = formflow_manage(env_file, "createuser", "--email", "you@example.com", "--staff",
                           "--password-stdin", given="a long passphrase\n")
    assert made.returncode == 0, made.stderr
    (tmp_path / "backups").mkdir()
    backup = formflow_manage(env_file, "backup", str(tmp_path / "backups"))
    assert backup.returncode == 0, backup.stderr
    assert len(list((tmp_path / "backups").glob("formflow-*.tar"))) == 1

    said = formflow_manage(env_file, "shell", "--no-imports", "-c",
                           "from django.conf import settings as s; "
                           "print(s.DEFAULT_FROM_EMAIL, s.REGISTRATION, oct(__import__('os')"
                           ".umask(0)))")
    assert said.stdout.strip() == "FormFlow <no-reply@example.com> closed 0o77"


def test_formflow_manage_says_what_is_wrong(tmp_path):
    missing = formflow_manage(tmp_path / "nothing.env", "check")
    assert missing.returncode == 1
    assert "cannot read the environment file" in missing.stderr


def test_the_environment_file_is_read_as_systemd_reads_it(tmp_path):
    env_file = tmp_path / "formflow.env"
    env_file.write_text("# comment\n; comment\n\nA=1\n  B = two words \nC=\"say \\\"hi\\\"\"\n"
                        "D='single'\nE=<x@y>\n")
    assert procfile.environment_file(env_file) == {
        "A": "1", "B": "two words", "C": 'say "hi"', "D": "single", "E": "<x@y>"}


# A process's command line spelled out: gunicorn serving the app, or celery with the project.
SPELLED = re.compile(r"gunicorn\W+config\.(asgi|wsgi)|celery\W+-A\W+config\b")
# Where the lines may appear: the Procfile itself, the units generated from it (checked above
# to match it), and tests, which assert what the reader makes of it.
MAY_SPELL = ("Procfile", "deploy/systemd/", "tests/")
NOT_OURS = {".git", ".venv", ".venv-dev", "node_modules", "var", "test-artifacts",
            "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis",
            ".schemathesis", "staticfiles"}


def project_files():
    for path in ROOT.rglob("*"):
        relative = path.relative_to(ROOT)
        if any(part in NOT_OURS or part.startswith(".venv") for part in relative.parts):
            continue
        if path.is_file() and path.stat().st_size < 1_000_000:
            yield relative.as_posix(), path


def test_no_file_but_the_procfile_spells_a_process_command_line():
    spelled = [name for name, path in project_files()
               if not name.startswith(MAY_SPELL) and not name.startswith("requirements")
               and SPELLED.search(path.read_text(errors="ignore"))]
    assert spelled == [], "take the line from the Procfile (scripts/procfile.py, scripts/stack.py)"


def test_the_check_sees_both_spellings():
    assert SPELLED.search('[bin / "gunicorn", "config.asgi:application", "--workers", "1"]')
    assert SPELLED.search(".venv-dev/bin/celery -A config worker --beat")
    assert not SPELLED.search("gunicorn keeps what it is good at")
