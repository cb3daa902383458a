"""Nothing waits forever (contract, "Exactness under concurrency"): every request ends within
30 s with an answer in the contract's shape, a trickling CAPTCHA provider, a slow name lookup,
a stuck row lock and a waiting idempotency claim included."""

import socket
import threading
import time
from contextlib import contextmanager

import pytest
from django.db import connection

from submissions.intake import captcha, idempotency
from submissions.models import IdempotencyKey, Submission
from tests.conftest import submit

CAPTCHA_FAILED = {
    "success": False,
    "error": "captcha_failed",
    "message": "The CAPTCHA could not be verified. Please try again.",
    "errors": [{"code": "BLOCKED",
                "message": "The CAPTCHA could not be verified. Please try again."}],
}


@contextmanager
def trickling_server(seconds_per_byte: float = 1.5):
    """A provider that reads the request, then sends its answer a byte at a time: no single
    read ever waits long, the whole answer takes a minute."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()
    answer = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"success": true}'

    def serve() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                return
            with client:
                client.recv(65536)
                for byte in answer:
                    if stop.wait(seconds_per_byte):
                        return
                    try:
                        client.sendall(bytes([byte]))
                    except OSError:
                        break

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/siteverify"
    finally:
        stop.set()
        listener.close()


@pytest.fixture
def captcha_form(owner_api, form):
    owner_api.patch(f"/api/v1/forms/{form.pk}", {"recaptchaSecret": "s"}, format="json")
    return form


def test_a_trickling_captcha_provider_is_a_422_within_the_bound(public, captcha_form,
                                                                 settings):
    with trickling_server() as url:
        settings.RECAPTCHA_VERIFY_URL = url
        started = time.monotonic()
        response = submit(public, captcha_form, {"name": "Ada", "g-recaptcha-response": "t"})
        took = time.monotonic() - started

    assert (response.status_code, response.json()) == (422, CAPTCHA_FAILED)
    assert took < captcha.TIMEOUT_SECONDS + 1.5
    assert not Submission.objects.exists()


def test_a_slow_name_lookup_counts_in_the_bound(public, captcha_form, settings, monkeypatch):
    real = socket.getaddrinfo

    def slow(host, *args, **kwargs):
        if host == "captcha.invalid":
            time.sleep(captcha.TIMEOUT_SECONDS + 3)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow)
    settings.RECAPTCHA_VERIFY_URL = "http://captcha.invalid/siteverify"
    started = time.monotonic()
    response = submit(public, captcha_form, {"name": "Ada", "g-recaptcha-response": "t"})

    assert (response.status_code, response.json()) == (422, CAPTCHA_FAILED)
    assert time.monotonic() - started < captcha.TIMEOUT_SECONDS + 1.5


def test_a_waiting_idempotency_claim_ends_with_a_409(public, form):
    IdempotencyKey.objects.create(form=form, key="busy", submission_id=Submission().pk,
                                  fingerprint=idempotency.fingerprint([["name", "Ada"]]))
    started = time.monotonic()

    response = submit(public, form, {"name": "Ada"}, HTTP_IDEMPOTENCY_KEY="busy")

    assert response.status_code == 409
    assert response.json() == {
        "success": False,
        "error": "idempotency_key_in_use",
        "message": "A request with this Idempotency-Key is still being processed. "
        "Try again shortly.",
        "errors": [{"code": "UNSPECIFIED", "message": "A request with this Idempotency-Key is "
                    "still being processed. Try again shortly."}],
    }
    assert idempotency.WAIT_SECONDS <= time.monotonic() - started < 30


@pytest.fixture
def bounded_sessions():
    """Database sessions bounded as a web process's are (config/wsgi.py)."""
    from core.infra import dbtimeouts

    connection.close()
    dbtimeouts.bound_web_sessions()
    yield
    dbtimeouts.unbind_sessions()
    connection.close()


def setting(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SHOW {name}")
        return cursor.fetchone()[0]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_web_sessions_are_bounded_and_client_paced_readers_are_not(bounded_sessions):
    from core.infra.dbtimeouts import paced_by_client

    assert [setting(name) for name in
            ("lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout")] == [
        "5s", "10s", "30s"]
    with paced_by_client():
        assert setting("statement_timeout") == "0"
        assert setting("idle_in_transaction_session_timeout") == "0"
        assert setting("lock_timeout") == "5s"
    assert setting("statement_timeout") == "10s"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_worker_starting_bounds_its_sessions_more_loosely():
    """Celery's worker_init (config/celery.py) bounds every session the worker, its pool and
    its beat open: a worker stopped inside a transaction is ended by the server."""
    from config import celery
    from core.infra import dbtimeouts

    connection.close()
    celery._bounded_sessions()  # what worker_init and beat_init run
    try:
        assert [setting(name) for name in
                ("lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout")] == [
            "10s", "1min", "1min"]
    finally:
        dbtimeouts.unbind_sessions()
        connection.close()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_export_still_streams_under_the_bounds(owner_api, form, bounded_sessions):
    from tests.conftest import add_submission

    for n in range(3):
        add_submission(form, {"n": str(n)})

    response = owner_api.get(f"/api/v1/forms/{form.pk}/export", {"format": "csv"})

    assert response.status_code == 200
    assert len(b"".join(response.streaming_content).splitlines()) == 4


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_stuck_lock_ends_the_request_with_a_503_in_the_contracts_shape(form,
                                                                         bounded_sessions):
    """Another session holds the form's row (FOR UPDATE, as a form delete does) and never
    ends: the submission gives up within the lock bound instead of waiting for it."""
    from django.db import connections
    from django.test import Client

    from forms_app.models import Form

    Form.objects.filter(pk=form.pk).update(field_names=[])
    holder = connections.create_connection("default")
    holder.set_autocommit(False)
    with holder.cursor() as cursor:
        cursor.execute("SELECT 1 FROM forms_app_form WHERE id = %s FOR UPDATE", [form.pk])
    try:
        started = time.monotonic()
        response = Client().post(f"/api/v1/f/{form.slug}", {"new-name": "x"},
                                 content_type="application/json")
        took = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
        connection.close()

    assert response.status_code == 503
    assert response.json()["error"] == "service_unavailable"
    assert took < 30


@contextmanager
def form_row_held(form):
    """Another session holds the form's row (FOR UPDATE, as a form delete does) for as long
    as the block runs."""
    from django.db import connections

    holder = connections.create_connection("default")
    holder.set_autocommit(False)
    with holder.cursor() as cursor:
        cursor.execute("SELECT 1 FROM forms_app_form WHERE id = %s FOR UPDATE", [form.pk])
    try:
        yield
    finally:
        holder.rollback()
        holder.close()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("extra", [{}, {"HTTP_IDEMPOTENCY_KEY": "k-1"}], ids=["plain", "keyed"])
def test_no_postgresql_wait_runs_past_the_requests_own_deadline(form, bounded_sessions,
                                                                monkeypatch, extra):
    """Each statement is bounded (5 s on a lock, 10 s in all), and a request runs several: a
    statement in the request's tail gets only the time it has left, so the waits never add up
    past the bound. Here the tail starts at once: the wait on the held row ends in about a
    second, not at the lock bound's 5 s."""
    from core.infra import dbtimeouts
    from forms_app.models import Form

    Form.objects.filter(pk=form.pk).update(field_names=[])
    monkeypatch.setattr(dbtimeouts, "REQUEST_WAITS_END", 1.0)
    with form_row_held(form):
        response, took = timed_submit(form, **{"data": {"new-name": "x"}, **extra})

    assert (response.status_code, response.json()) == (503, SERVICE_UNAVAILABLE)
    assert took < 3
    assert not Submission.objects.exists()
    # The next statement, outside the request's tail, has the whole bounds again.
    assert [setting("statement_timeout"), setting("lock_timeout")] == ["10s", "5s"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_reader_paced_by_its_client_is_not_cut_by_the_requests_tail(bounded_sessions,
                                                                       monkeypatch):
    """An export streams for as long as its client reads: deep in its request's tail, its
    statements keep no bound, while any other statement there gets the tail's short one."""
    from django.db import OperationalError

    from core.infra import dbtimeouts

    monkeypatch.setattr(dbtimeouts, "REQUEST_WAITS_END", 0.0)
    dbtimeouts._began()
    try:
        with dbtimeouts.paced_by_client(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(0.3)")
        with pytest.raises(OperationalError, match="statement timeout"), \
                connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(0.3)")
    finally:
        dbtimeouts._ended()


@pytest.fixture
def sqlite_file(form, tmp_path, bounded_sessions):
    """The test database copied to a file, as the embedded setup keeps it, for this thread's
    requests. The in-memory test database shares one cache between its connections, where a
    held lock fails a second writer at once instead of making it wait, as a file does."""
    import sqlite3

    from django.db import connections

    memory = connections["default"]
    memory.ensure_connection()
    path = tmp_path / "db.sqlite3"
    with sqlite3.connect(path) as copy:
        memory.connection.backup(copy)
        copy.execute("PRAGMA journal_mode=WAL")  # as the settings open it
    on_file = memory.__class__({**memory.settings_dict, "NAME": str(path)}, "default")
    connections["default"] = on_file
    try:
        yield path
    finally:
        on_file.close()
        connections["default"] = memory


@contextmanager
def write_lock_held(path):
    """Another process's connection holds SQLite's write lock for as long as the block runs
    (for ever, as far as the request inside can tell)."""
    import sqlite3

    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.rollback()
        holder.close()


SERVICE_UNAVAILABLE = {
    "success": False,
    "error": "service_unavailable",
    "message": "The service is briefly unavailable. Please try again shortly.",
    "errors": [{"code": "UNSPECIFIED",
                "message": "The service is briefly unavailable. Please try again shortly."}],
}


def timed_submit(form, data=None, **extra):
    from django.test import Client

    started = time.monotonic()
    response = Client().post(f"/api/v1/f/{form.slug}", data or {"name": "Ada"},
                             content_type="application/json", **extra)
    return response, time.monotonic() - started


@pytest.mark.sqlite
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("extra", [{}, {"HTTP_IDEMPOTENCY_KEY": "k-1"}], ids=["plain", "keyed"])
def test_a_held_sqlite_write_lock_ends_the_request_with_a_503(form, sqlite_file, extra):
    """The settings let a statement wait 20 s for the lock, and a keyed submission runs
    several: a web request waits at most 5 s a statement, and answers the contract's 503."""
    from core.infra import dbtimeouts

    with write_lock_held(sqlite_file):
        response, took = timed_submit(form, **extra)
        assert (response.status_code, response.json()) == (503, SERVICE_UNAVAILABLE)
        assert response["Retry-After"] == "5"
        # The first statement that waits gives up, and the request with it.
        assert dbtimeouts.SQLITE_BUSY_TIMEOUT <= took < dbtimeouts.SQLITE_BUSY_TIMEOUT + 2
    assert not Submission.objects.exists()
    assert not IdempotencyKey.objects.exists()

    response, _ = timed_submit(form, **extra)

    assert response.status_code == 200
    assert Submission.objects.count() == 1


@pytest.mark.sqlite
@pytest.mark.django_db(transaction=True)
def test_no_sqlite_wait_runs_past_the_requests_own_deadline(form, sqlite_file, monkeypatch):
    """Each statement's wait is cut to what the request has left, so waits never add up past
    the bound however many statements wait in turn."""
    from core.infra import dbtimeouts

    monkeypatch.setattr(dbtimeouts, "REQUEST_WAITS_END", 1.0)
    with write_lock_held(sqlite_file):
        response, took = timed_submit(form, HTTP_IDEMPOTENCY_KEY="k-2")

    assert response.status_code == 503
    assert took < 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_cut_that_fails_raises_djangos_error(bounded_sessions, monkeypatch):
    """The tail's cut runs before the statement, on the driver's cursor: in an aborted
    transaction it fails first, and must fail as Django's error (the contract's 503), not
    the driver's (a 500)."""
    from django.db import DatabaseError, transaction

    from core.infra import dbtimeouts

    monkeypatch.setattr(dbtimeouts, "REQUEST_WAITS_END", 0.0)
    dbtimeouts._began()
    try:
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            with pytest.raises(DatabaseError):
                cursor.execute("SELECT 1 / 0")
            cursor.execute("SELECT 1")
    finally:
        dbtimeouts._ended()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bounds_put_back_in_a_transaction_that_rolls_back_are_put_back_again(
    bounded_sessions, monkeypatch
):
    """A request cut in its tail leaves its kept connection (CONN_MAX_AGE) at the tail's
    bounds, and the next request's first statement puts them back. When that statement
    runs in a transaction that then rolls back, the rollback takes the restore with it: the
    connection was left at 100 ms for every request after."""
    from django.db import transaction

    from core.infra import dbtimeouts

    tail = dbtimeouts.REQUEST_WAITS_END
    monkeypatch.setattr(dbtimeouts, "REQUEST_WAITS_END", 0.0)
    dbtimeouts._began()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")  # in the tail: cut to 100 ms
    finally:
        dbtimeouts._ended()
    monkeypatch.setattr(dbtimeouts, "REQUEST_WAITS_END", tail)

    dbtimeouts._began()  # the next request, on the same connection
    try:
        with pytest.raises(RuntimeError), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            raise RuntimeError("a failure that rolls the transaction back")
        assert [setting("statement_timeout"), setting("lock_timeout")] == ["10s", "5s"]
    finally:
        dbtimeouts._ended()
