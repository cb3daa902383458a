import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_check(tmp_path, **env):
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATA_DIR": str(tmp_path),
        **env,
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_settings_pass_the_deploy_check(tmp_path):
    result = run_check(
        tmp_path,
        SECRET_KEY=secrets.token_urlsafe(64),
        BASE_URL="https://forms.example.com",
        ALLOWED_HOSTS="forms.example.com",
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_ssl_redirect_and_hsts_stay_configurable(tmp_path):
    result = run_check(
        tmp_path,
        SECRET_KEY=secrets.token_urlsafe(64),
        BASE_URL="https://forms.example.com",
        SECURE_SSL_REDIRECT="false",
        SECURE_HSTS_SECONDS="0",
    )

    assert result.returncode != 0
    assert "security.W008" in result.stderr + result.stdout
    assert "security.W004" in result.stderr + result.stdout


def test_a_malformed_boolean_stops_the_service_with_a_clear_message(tmp_path):
    result = run_check(tmp_path, DEBUG="maybe")

    assert result.returncode != 0
    assert "DEBUG must be a boolean" in result.stderr
