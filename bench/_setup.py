"""Shared set-up for the benchmarks: Django with a throwaway database."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings_test")

import django  # noqa: E402

django.setup()

from django.test.utils import setup_databases, setup_test_environment, teardown_databases  # noqa: E402
from stack import timed  # noqa: E402, F401  (scripts/stack.py: the benches' one timer)


@contextmanager
def scratch_database():
    """A fresh database (bench_<name>), dropped afterwards; never the real one, and never
    the test suite's test_<name>, so a benchmark can run beside the tests."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if not database["NAME"].startswith(":memory:") and database["ENGINE"].endswith("postgresql"):
        database.setdefault("TEST", {})["NAME"] = f"bench_{database['NAME']}"
    setup_test_environment()
    names = setup_databases(verbosity=0, interactive=False)
    try:
        yield
    finally:
        teardown_databases(names, verbosity=0)
