"""dev.py start keeps its processes running: one that exits is started again after a growing
delay, without touching the others; stopping stops them all."""

import itertools
import sys
import time

import dev

CRASH = [sys.executable, "-c", "import sys; sys.exit(3)"]
SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]


def run_for(supervisor: dev.Supervisor, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        supervisor.step(time.monotonic())
        time.sleep(0.05)


def test_a_crashed_process_is_started_again_and_the_others_keep_running():
    supervisor = dev.Supervisor({"worker": CRASH, "web": SLEEP}, delays=[0.1, 0.2], stable=60)
    starts = []
    real_step = supervisor.step

    def counting_step(now):
        before = supervisor.processes["worker"]
        real_step(now)
        after = supervisor.processes["worker"]
        if after is not None and after is not before:
            starts.append(now)

    supervisor.step = counting_step
    try:
        run_for(supervisor, 2.0)
        web = supervisor.processes["web"]
        assert web is not None and web.poll() is None  # never stopped for the worker's sake
        assert len(starts) >= 4
        gaps = [later - earlier for earlier, later in itertools.pairwise(starts)]
        assert all(gap >= 0.1 for gap in gaps)  # never restarted in a tight loop
        assert supervisor.failures["worker"] >= 3
    finally:
        supervisor.stop()

    assert web.poll() is not None


def test_a_process_that_ran_long_enough_starts_again_from_the_first_delay():
    supervisor = dev.Supervisor({"worker": CRASH}, delays=[0.1, 30], stable=0)
    try:
        run_for(supervisor, 1.0)
        # Each run counted as stable, so the 30 s delay was never reached.
        assert supervisor.failures["worker"] == 0
    finally:
        supervisor.stop()
