"""A worker yields the CPU to the web processes on a shared machine: the worker's main process
and every process of its pool run at CELERY_WORKER_NICE (config/celery.py), so under a flood
intake keeps the CPU and deliveries use what it leaves."""

import os
import time
from pathlib import Path

import pytest

from tests.operations.processes import started


@pytest.fixture
def environment(embedded_environment):
    return {**embedded_environment, "WORKER_CONCURRENCY": "2", "LOG_LEVEL": "WARNING"}


def niceness(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def group_niceness(pid: int) -> int | None:
    """The nice of the scheduler's group of ``pid``'s session (Linux autogroup), if any."""
    try:
        return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
    except FileNotFoundError:
        return None


def worker_niceness(env: dict) -> tuple[int, list[int], int | None]:
    """The niceness of a worker started from the Procfile in a session of its own (as a
    systemd unit or a process manager starts it), of its pool's processes, and of its
    session's scheduling group."""
    with started("worker", env) as process:
        deadline = time.monotonic() + 60
        while len(children(process.pid)) < 2:
            assert process.poll() is None, "the worker exited"
            assert time.monotonic() < deadline, "the worker's pool did not start"
            time.sleep(0.2)
        return (niceness(process.pid), [niceness(pid) for pid in children(process.pid)],
                group_niceness(process.pid))


def test_the_worker_and_its_pool_run_at_the_lowest_priority_by_default(environment):
    main, pool, group = worker_niceness(environment)

    assert main == 19
    assert pool == [19, 19]
    # Where the kernel groups sessions for the scheduler, nice alone ranks the worker only
    # within its session: the group is lowered too.
    assert group in (None, 19)
    if Path("/proc/sys/kernel/sched_autogroup_enabled").exists():
        assert group == 19


def test_celery_worker_nice_sets_how_much_they_yield(environment):
    base = os.nice(0)
    main, pool, group = worker_niceness({**environment, "CELERY_WORKER_NICE": "5"})

    assert main == min(19, base + 5)
    assert pool == [main, main]
    assert group in (None, 5)


def test_celery_worker_nice_zero_leaves_them_as_started(environment):
    main, pool, group = worker_niceness({**environment, "CELERY_WORKER_NICE": "0"})

    assert main == os.nice(0)
    assert pool == [main, main]
    assert group in (None, 0)
