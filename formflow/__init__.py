"""FormFlow's release. The one place the version is written: /readyz, /status, the OpenAPI
document, formflow_build_info and CHANGELOG.md's newest entry agree with it
(tests/operations/test_version.py).

``version()`` adds the commit the code was built from (``1.2.0+abc1234``, a semantic
version's build metadata): read from the git checkout the code runs from, or, in an image
built without ``.git``, from the ``COMMIT`` file the Containerfile writes from its build
argument. Neither there: the release alone.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

__version__ = "1.2.0"

ROOT = Path(__file__).resolve().parent.parent
COMMIT_FILE = Path(__file__).resolve().parent / "COMMIT"
SHORT = 7
_HEX = re.compile(r"[0-9a-f]{7,40}")


def version() -> str:
    found = commit()
    return f"{__version__}+{found}" if found else __version__


@functools.cache
def commit() -> str:
    """The short commit hash, or "" when none can be found. Read once per process: the code
    a process runs does not change under it."""
    for read in (_stamped, _checked_out):
        try:
            found = read().strip().lower()
        except (OSError, ValueError):
            continue
        if _HEX.fullmatch(found):
            return found[:SHORT]
    return ""


def _stamped() -> str:
    return COMMIT_FILE.read_text()


def _checked_out() -> str:
    """HEAD of the checkout, read from the files git keeps (no git program needed): a
    detached HEAD names its commit; a branch names a ref, loose or packed."""
    git = _git_dir(ROOT / ".git")
    head = (git / "HEAD").read_text().strip()
    if not head.startswith("ref: "):
        return head
    ref = head.removeprefix("ref: ")
    loose = git / ref
    if loose.is_file():
        return loose.read_text()
    common = _common_dir(git)
    if (common / ref).is_file():
        return (common / ref).read_text()
    for line in (common / "packed-refs").read_text().splitlines():
        sha, _, name = line.partition(" ")
        if name == ref:
            return sha
    raise ValueError(f"{ref} not found")


def _git_dir(dot_git: Path) -> Path:
    """A worktree's or a submodule's ``.git`` is a file naming the real folder."""
    if dot_git.is_file():
        pointer = dot_git.read_text().strip().removeprefix("gitdir: ")
        return (dot_git.parent / pointer).resolve()
    return dot_git


def _common_dir(git: Path) -> Path:
    """Where a worktree's branches live: its ``commondir`` file, else the folder itself."""
    pointer = git / "commondir"
    return (git / pointer.read_text().strip()).resolve() if pointer.is_file() else git
