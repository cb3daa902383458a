"""Opt-in error reports (SENTRY_DSN) and JSON logs (LOG_FORMAT=json)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from config.env import ConfigError

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import django, logging, sentry_sdk; django.setup(); "
    "logging.getLogger('formflow.probe').warning('hello %s', 'there'); "
    "options = sentry_sdk.get_client().options; "
    "print(json.dumps([options['dsn'], options['send_default_pii'], "
    "options['max_request_body_size'], options['release']]))"
)


def run_settings(**env) -> subprocess.CompletedProcess:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test", **env}
    return subprocess.run([sys.executable, "-c", "import json; " + PROBE], cwd=ROOT,
                          env=environment, capture_output=True, text=True, timeout=60)


def test_sentry_reports_from_every_process_without_personal_data():
    import formflow

    dsn = "http://public@127.0.0.1:9/1"  # never contacted: nothing is raised
    done = run_settings(SENTRY_DSN=dsn)

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [
        dsn, False, "never", f"formflow@{formflow.__version__}"]


def test_without_sentry_dsn_nothing_is_reported():
    done = run_settings(SENTRY_DSN="")

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])[0] is None


def test_json_logs_are_one_object_a_line():
    done = run_settings(LOG_FORMAT="json")

    line = next(line for line in done.stderr.splitlines() if "formflow.probe" in line)
    entry = json.loads(line)
    assert entry["message"] == "hello there"
    assert (entry["level"], entry["logger"]) == ("WARNING", "formflow.probe")
    assert entry["time"].endswith("Z")


def test_an_unknown_log_format_is_refused(monkeypatch):
    from config import env

    monkeypatch.setenv("LOG_FORMAT", "xml")
    with pytest.raises(ConfigError, match="LOG_FORMAT must be one of plain, json"):
        env.choice("LOG_FORMAT", ("plain", "json"), "plain")


def test_an_unknown_registration_mode_is_refused(monkeypatch):
    from config import env

    monkeypatch.setenv("REGISTRATION", "maybe")
    with pytest.raises(ConfigError, match="REGISTRATION must be one of open, invite, closed"):
        env.choice("REGISTRATION", ("open", "invite", "closed"), "open")
