"""Every command in the shell blocks of the README, docs/deploy.md and docs/operating.md is one
that CI or a test runs: each must start with a command listed here, and the place named must
run it. A command added to those pages without a run behind it fails here, and so does a code
block without its language (an untagged block would escape the check)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("README.md", "docs/deploy.md", "docs/operating.md")

# The start of a command -> (the file that runs it, what in that file runs it).
RUN_BY = {
    "python3 dev.py start": ("scripts/smoke.py", '"dev.py", "start", "--port"'),
    "python3 dev.py test": (".ci/run", "python3 dev.py test"),
    "python3 scripts/procfile.py show": (
        "tests/project/test_procfile.py", '"scripts/procfile.py", "show"'),
    "python3 scripts/procfile.py units deploy/systemd": (
        "tests/project/test_procfile.py", "on_disk == generated"),
    "python3 scripts/deploy_check.py": (".ci/run", "python3 scripts/deploy_check.py"),
    "python3 scripts/cluster_check.py": (".ci/run", "python3 scripts/cluster_check.py"),
    "python3 scripts/smoke.py production": (".ci/run", "python3 scripts/smoke.py production"),
    "python3 scripts/smoke.py embedded": (".ci/run", "python3 scripts/smoke.py embedded"),
    "python3 scripts/smoke.py check": ("scripts/deploy_check.py", '["check", "--base-url"'),
    "sudo /opt/formflow/deploy/formflow-manage ": (
        "tests/project/test_procfile.py",
        "def test_formflow_manage_runs_manage_py_with_the_environment_file"),
    # CI runs `python manage.py` inside the image it builds, as compose's exec does.
    "docker compose exec web python manage.py ": (
        "scripts/smoke.py", '"--entrypoint=python", args.image, "manage.py"'),
    "docker compose run --rm --no-deps --entrypoint python web manage.py migrate": (
        "scripts/smoke.py", '"--entrypoint=python", args.image, "manage.py"'),
    # The backup and restore streams, as real processes through a pipe.
    "docker compose exec -T web python manage.py backup - ": (
        "tests/operations/test_backup.py", "def test_backup_and_restore_stream_through_a_pipe"),
    "docker compose run --rm --no-deps -T --entrypoint python web manage.py restore - ": (
        "tests/operations/test_backup.py", "def test_backup_and_restore_stream_through_a_pipe"),
    # compose itself cannot run in CI (its PostgreSQL and Redis images come from a registry CI
    # cannot reach): its own commands are checked against compose.yaml instead.
    "docker compose up -d": (
        "tests/project/test_deploy_files.py", "def test_the_docs_compose_commands_fit_compose"),
    "docker compose build": (
        "tests/project/test_deploy_files.py", "def test_the_docs_compose_commands_fit_compose"),
    'curl -H "Authorization: Bearer $METRICS_TOKEN" ': (
        "scripts/operations_check.py", 'call("GET", f"{base}/metrics", token=METRICS_TOKEN)'),
    # The README's "Try it" block, run whole by bash against a live server.
    "curl ": ("tests/project/test_readme.py", "def test_the_try_it_block_works_as_written"),
    "CODE=": ("tests/project/test_readme.py", "CODE={code}"),
    "TOKEN=$(curl ": ("tests/project/test_readme.py", "def test_the_try_it_block_works_as_written"),
    "FORM=$(curl ": ("tests/project/test_readme.py", "def test_the_try_it_block_works_as_written"),
    "SLUG=$(echo ": ("tests/project/test_readme.py", "def test_the_try_it_block_works_as_written"),
}


def commands(page: str) -> list[str]:
    """Each command of the page's sh blocks, continuation lines joined, comments left out."""
    found = []
    for block in re.findall(r"^ *```sh\n(.*?)```", (ROOT / page).read_text(), re.DOTALL | re.M):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                found.append(line)
    return found


def test_every_documented_command_is_run_by_ci_or_a_test():
    unrun = []
    for page in PAGES:
        for command in commands(page):
            starts = [start for start in RUN_BY if command.startswith(start)]
            if not starts:
                unrun.append(f"{page}: {command}")
                continue
            path, needle = RUN_BY[max(starts, key=len)]
            assert needle in (ROOT / path).read_text(), (command, path, needle)
    assert unrun == []


def test_the_pages_have_commands_at_all():
    assert len(commands("README.md")) >= 10
    assert len(commands("docs/deploy.md")) >= 8
    assert len(commands("docs/operating.md")) >= 7


def test_every_code_block_says_its_language():
    for page in PAGES:
        opening = True
        for number, line in enumerate((ROOT / page).read_text().splitlines(), 1):
            fence = line.strip()
            if fence.startswith("```"):
                if opening:
                    assert fence != "```", f"{page}:{number}: a block without its language"
                opening = not opening
