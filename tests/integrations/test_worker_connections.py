"""A Celery worker keeps its database connection from one delivery to the next."""

import pytest
from celery import signals
from celery.fixups.django import DjangoWorkerFixup
from django.db import connection

from config.celery import app
from integrations.delivery.tasks import deliver

# SQLite's test database lives in memory and is never closed; the reconnect cost is
# PostgreSQL's, so this is checked there.
pytestmark = pytest.mark.postgres


def run_as_worker(fixup: DjangoWorkerFixup) -> None:
    """What a worker does around one task: the prerun and postrun signals, then a query."""
    signals.task_prerun.send(sender=deliver, task_id="t", task=deliver, args=(), kwargs={})
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    signals.task_postrun.send(sender=deliver, task_id="t", task=deliver, args=(), kwargs={})


@pytest.fixture
def worker_fixup():
    fixup = DjangoWorkerFixup(app)
    fixup.install()
    yield fixup
    signals.task_prerun.disconnect(fixup.on_task_prerun)
    signals.task_postrun.disconnect(fixup.on_task_postrun)
    signals.worker_process_init.disconnect(fixup.on_worker_process_init)
    signals.beat_embedded_init.disconnect(fixup.close_database)


@pytest.mark.django_db(transaction=True)
def test_tasks_reuse_one_database_connection(worker_fixup):
    connection.ensure_connection()
    first = connection.connection

    for _ in range(5):
        run_as_worker(worker_fixup)

    assert connection.connection is first


@pytest.mark.django_db(transaction=True)
def test_an_expired_connection_is_replaced_between_tasks(worker_fixup):
    connection.ensure_connection()
    first = connection.connection
    connection.close_at = 0  # past CONN_MAX_AGE

    run_as_worker(worker_fixup)

    assert connection.connection is not None
    assert connection.connection is not first


def synchronous_commit(wrapper) -> str:
    with wrapper.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return cursor.fetchone()[0]


def worker_synchronous_commit() -> str:
    """``synchronous_commit`` on a connection a worker's pool process opens."""
    from django.db import connections
    from django.db.backends.signals import connection_created

    from config import celery
    from core.infra import dbtimeouts

    celery._asynchronous_commits()  # a worker's pool process runs it first
    worker = connections.create_connection("default")
    try:
        return synchronous_commit(worker)
    finally:
        worker.close()
        connection_created.disconnect(dbtimeouts._commit_asynchronously)


def test_a_worker_commits_without_waiting_for_the_disk_and_the_web_does_not(db):
    from django.db import connections

    web = connections.create_connection("default")
    try:
        assert synchronous_commit(web) == "on"  # submissions wait for the disk
    finally:
        web.close()
    assert worker_synchronous_commit() == "off"


def test_behind_a_pooler_a_worker_sets_nothing_on_the_session(db, settings):
    """Behind a pooler in transaction mode (DATABASE_SESSION_TIMEOUTS=false) a session
    setting outlives the transaction and goes to whichever client the server connection
    serves next: a web process's submission would then commit without waiting for the disk
    too. The worker leaves its sessions as they are."""
    settings.DATABASE_SESSION_TIMEOUTS = False

    assert worker_synchronous_commit() == "on"
