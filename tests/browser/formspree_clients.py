"""Formspree's own JavaScript clients, from the npm registry, for the drop-in tests.

The packages are installed by the test setup beside the project (node_modules/ is ignored by
git), as .ci/run installs them with axe-core: one ``npm install`` of every package, so one
never removes another. Without node or npm a developer's run skips these tests; in CI
(CI=true) it fails them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "node_modules"
# Every package the tests take from npm; .ci/run installs the same (a test holds them equal).
NPM_PACKAGES = ("axe-core@4.14.1", "@formspree/core@4.0.0", "@formspree/ajax@1.1.5")
CORE = NODE_MODULES / "@formspree" / "core" / "package.json"
AJAX_SCRIPT = NODE_MODULES / "@formspree" / "ajax" / "dist" / "global.js"
# Scripts run by node sit inside node_modules, so their imports resolve to the packages.
SCRIPTS = NODE_MODULES / ".formflow-tests"


def missing(tool: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{tool} is not installed; CI must run the Formspree client tests.")
    pytest.skip(f"{tool} is not installed (apt-get install npm)")


def install_packages() -> None:
    """The npm packages, installed once (a later run finds them in node_modules)."""
    if CORE.exists() and AJAX_SCRIPT.exists():
        return
    if shutil.which("npm") is None:
        missing("npm")
    subprocess.run(
        ["npm", "install", "--prefix", str(ROOT), "--no-save", "--no-package-lock",
         "--no-audit", "--no-fund", *NPM_PACKAGES],
        check=True, capture_output=True, timeout=300,
    )


def run_node(script: str, name: str) -> dict:
    """Run an ES module with node; it prints one JSON line, the result."""
    if shutil.which("node") is None:
        missing("node")
    SCRIPTS.mkdir(parents=True, exist_ok=True)
    path = SCRIPTS / f"{name}.mjs"
    path.write_text(script)
    done = subprocess.run(["node", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def version_of(package_json: Path) -> str:
    return json.loads(package_json.read_text())["version"]
