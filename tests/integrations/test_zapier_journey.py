"""scripts/zapier_journey.py against a live server: the journey .ci/run plays after starting
an instance, here with the test server (its deliveries run in the request, eagerly)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pullapi.services import api_key_create

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "zapier_journey.py"


@pytest.fixture
def hooks_key(user, form) -> str:
    return api_key_create(owner=user, name="zapier", forms=[str(form.pk)],
                          scopes=["read", "hooks"])[1]


def journey(live_server, key: str, form) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, SCRIPT, live_server.url, key, form.slug],
        capture_output=True, text=True, timeout=120,
    )


def test_the_journey_passes_and_its_sample_holds_a_submission(
    live_server, allow_private, hooks_key, form
):
    result = journey(live_server, hooks_key, form)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "2. read the sample: 1 event(s), the newest the submission just posted" in (
        result.stdout)
    assert "zapier-journey: passed" in result.stdout


def test_the_journey_fails_on_a_sample_without_the_submission(
    live_server, allow_private, hooks_key, form, monkeypatch
):
    from integrations.hooks import services

    monkeypatch.setattr(services, "hook_sample", lambda *, form: [])

    result = journey(live_server, hooks_key, form)

    assert result.returncode == 1
    assert "FAILED: sample: not 1 to 3 events: []" in result.stdout
