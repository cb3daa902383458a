"""Waking workers with production timing: a lingering worker, the web's skip window, the
grace after the flag comes down, and the flag's expiry (integrations/delivery/nudge.py)."""

import threading
import time

import pytest
from django.db import connection

from integrations.delivery import messages, nudge, retry, worker
from tests.conftest import submit

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def published(settings, monkeypatch):
    """The deliver_due messages the web would send; nothing runs them."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent: list[str] = []
    monkeypatch.setattr(messages, "wake_workers", lambda what, **_: sent.append(what) or True)
    nudge.forget()
    yield sent
    nudge.forget()


class Worker(threading.Thread):
    """One deliver_due run in its own thread and database connection."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.done: int | None = None

    def run(self) -> None:
        try:
            self.done = worker.deliveries_run_due()
        finally:
            connection.close()


def delivered(receiver) -> list[str]:
    return sorted(r.json()["data"]["fields"]["n"] for r in receiver.requests)


# A worker thread reading deliveries while the test's requests write them: SQLite's in-memory
# test database shares one cache between connections, where a reader meets a writer's table
# lock as an error at once ("database table is locked"), not a wait as on the file the
# embedded setup runs on (WAL: readers never wait). So it runs on PostgreSQL, where the
# deliveries' reads and writes meet as in production.
@pytest.mark.postgres
def test_a_lingering_worker_takes_new_work_without_a_message(
    public, form, hook, receiver, published, settings
):
    settings.DELIVERY_LINGER_SECONDS = 0.4
    settings.NUDGE_SKIP_SECONDS = 0.1
    submit(public, form, {"n": "0"})
    assert len(published) == 1  # the first commit raised the flag
    worker = Worker()
    worker.start()

    for n in range(1, 5):
        time.sleep(0.05)
        submit(public, form, {"n": str(n)})
    worker.join(timeout=10)

    assert published == [published[0]]  # the worker was on the job: no other message
    assert delivered(receiver) == ["0", "1", "2", "3", "4"]
    assert worker.done == 5
    time.sleep(settings.NUDGE_SKIP_SECONDS)
    submit(public, form, {"n": "5"})
    assert len(published) == 2  # it stopped and took the flag down: the next commit wakes one


def test_a_commit_that_saw_the_flag_up_as_it_came_down_is_still_delivered(
    public, form, hook, receiver, published, settings
):
    settings.DELIVERY_LINGER_SECONDS = 0.0
    # Wide enough that a loaded machine still submits inside it (the worker looks on for
    # 1.5 times as long): the test is about the order of events, not their speed.
    settings.NUDGE_SKIP_SECONDS = 2.0
    assert nudge.raise_flag()  # this process has just seen the flag up
    worker = Worker()
    worker.start()  # nothing is due: it takes the flag down at once, then waits the grace
    deadline = time.monotonic() + 1.5  # a busy machine starts the thread late; no later
    while nudge.is_up() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not nudge.take_flag()  # it is down

    submit(public, form, {"n": "late"})  # inside the skip window: no round trip, no message
    worker.join(timeout=10)

    assert published == []
    assert delivered(receiver) == ["late"]


def test_a_flag_whose_worker_died_expires(monkeypatch, settings):
    settings.NUDGE_SKIP_SECONDS = 0.0
    monkeypatch.setattr(nudge, "FLAG_TTL_SECONDS", 0.3)
    nudge.hold_flag()  # a worker on the job, which then dies without taking it down

    assert not nudge.raise_flag()
    time.sleep(0.4)
    assert nudge.raise_flag()  # expired: this commit publishes, and a live worker comes


def test_a_worker_renews_the_flag_it_holds(monkeypatch, settings):
    settings.NUDGE_SKIP_SECONDS = 0.0
    monkeypatch.setattr(nudge, "FLAG_TTL_SECONDS", 2.0)  # margins a busy machine keeps
    nudge.hold_flag()
    time.sleep(1.2)
    nudge.hold_flag()
    time.sleep(1.2)  # past the first hold's time to live, inside the renewal's

    assert not nudge.raise_flag()


def test_rows_left_to_a_worker_that_died_are_swept(public, form, hook, published, settings,
                                                   clock):
    from integrations.models import Delivery

    settings.NUDGE_SKIP_SECONDS = 0.0
    nudge.hold_flag()  # a lingering worker: the commit below leaves its row to it
    submit(public, form, {"n": "orphan"})
    assert published == []
    assert Delivery.objects.get().queued_at is not None  # counts as having a message

    clock.advance(seconds=6)
    assert retry.delivery_sweep() == 0
    assert published == []  # the worker is still on the job

    nudge.take_flag()  # it died, and its flag expired
    retry.delivery_sweep()

    assert len(published) == 1
