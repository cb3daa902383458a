"""The layout docs/architecture.md gives tests, scripts and benches: tests sit in the folder of
what they test, and scripts/stack.py is the one copy of the helpers scripts and benches share."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What only scripts/stack.py may define: a free port, a graceful stop, the benches' timer.
SHARED = re.compile(r"def free_port\b|def timed\b|def wait_up\b|signal\.SIGTERM|\.bind\(\(")


def test_no_test_module_sits_loose_at_the_root_of_tests():
    assert sorted(path.name for path in (ROOT / "tests").glob("test_*.py")) == []


def test_scripts_and_benches_take_the_shared_helpers_from_stack_py():
    copies = [
        f"{path.relative_to(ROOT)}: {match.group()}"
        for path in sorted([*(ROOT / "scripts").glob("*.py"), *(ROOT / "bench").glob("*.py")])
        if path.name != "stack.py"
        for match in SHARED.finditer(path.read_text())
    ]
    assert copies == []
