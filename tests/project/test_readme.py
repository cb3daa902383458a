"""The README's "Try it" block, run as written by bash against a live server: sign up, verify
with the mailed code, get a token, create a form, submit and list. The code is the one step a
reader types in: the block is cut at its `CODE=` line and the real code put there."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import last_code

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


def try_it_block() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Try it"):text.index("\n## ", text.index("## Try it") + 1)]
    return re.search(r"```sh\n(.*?)```", section, re.DOTALL).group(1)


def bash(script: str) -> str:
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_try_it_block_works_as_written(live_server):
    block = try_it_block().replace("localhost:8000", live_server.url.removeprefix("http://"))
    before, _typed, after = re.split(r"^(CODE=\S+.*)$", block, maxsplit=1, flags=re.M)

    assert "Check your inbox" in bash(before)
    code = last_code("you@example.com")
    # curl prints each answer without a newline: the verify, submit and list answers run on.
    out = bash(f"CODE={code}\n{after}")

    assert '"isVerified":true' in out  # verified and signed in
    assert '{"success": true, "message": "Thanks! Your submission was received."' in out
    assert '"fields":{"name":"Ada","email":"ada@example.com","message":"Hello"}' in out
