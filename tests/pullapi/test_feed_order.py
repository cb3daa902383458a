"""Cursors stay exact, and fresh rows are served at once, whatever other sessions do
(PostgreSQL; contract, "Pull freshness").

Submissions of one account are not committed one at a time, so a row stamped earlier can
commit later, under any database role. These tests hold such a row open, let many connections
(and another role) commit in random order, and hold transactions open elsewhere, while a reader
syncs the way the spec tells clients to: page with ``order=asc`` and ``since`` the newest
``submittedAt`` seen, follow ``nextCursor``, upsert by ``id``. Paging by time alone would skip
the late row; the feed's sequencer (submissions/feed/) places it after every row served.
"""

import json
import random
import threading
import time
import uuid

import psycopg
import pytest
from django.db import connection

from forms_app.models import Form
from pullapi.selectors import submissions_page
from submissions import feed
from submissions.models import Submission
from tests.conftest import add_submission, submit

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
LIST = "/api/v1/submissions"


@pytest.fixture
def raw_connection():
    """Connections of their own, as other web processes would have; closed (rolling back
    what is open) even when the test fails, so the database can be cleaned afterwards."""
    opened: list[psycopg.Connection] = []

    def connect() -> psycopg.Connection:
        params = connection.get_connection_params()
        for name in ("cursor_factory", "context", "prepare_threshold", "server_side_binding"):
            params.pop(name, None)
        opened.append(psycopg.connect(**params))
        return opened[-1]

    yield connect
    for conn in opened:
        conn.close()


def insert_open(conn: psycopg.Connection, form_id, label: str) -> uuid.UUID:
    """Insert a submission inside ``conn``'s open transaction; stamped now, committed later."""
    ident = uuid.uuid4()
    conn.execute(
        "INSERT INTO submissions_submission (id, form_id, data, ip, user_agent, origin) "
        "VALUES (%s, %s, %s::jsonb, NULL, '', '')",
        [ident, form_id, f'[["n", "{label}"]]'],
    )
    return ident


def http_sync(puller, form, since):
    """One sync run over HTTP; returns the ids seen and the newest submittedAt."""
    seen, params = [], {"formId": form.slug, "order": "asc", "limit": 1}
    if since:
        params["since"] = since
    while True:
        body = puller.get(LIST, params).json()
        for row in body["data"]:
            seen.append(row["id"])
            since = max(since or "", row["submittedAt"])
        if not body["nextCursor"]:
            return seen, since
        params = {"formId": form.slug, "order": "asc", "limit": 1, "cursor": body["nextCursor"]}


def test_a_row_that_commits_after_a_later_one_is_still_synced(puller, form, raw_connection):
    late_writer = raw_connection()
    late = insert_open(late_writer, form.pk, "late")  # stamped first, committed last
    time.sleep(0.01)
    early = add_submission(form, {"n": "early"})  # stamped after it, committed at once

    first_run, since = http_sync(puller, form, None)
    late_writer.commit()
    second_run, newest = http_sync(puller, form, since)

    assert first_run == [str(early.pk)]  # served at once: the open transaction holds nothing
    assert str(late) in second_run  # placed after it, so the next sync gets it
    assert set(first_run) | set(second_run) == {str(late), str(early.pk)}
    # Its time follows the feed: not before the row it committed behind, so a client's `since`
    # still reaches it; the owner still sees when it arrived.
    late_row = puller.get(f"{LIST}/{late}").json()["data"]
    assert late_row["submittedAt"] == since == newest
    stored = Submission.objects.get(pk=late)
    assert stored.received_at < stored.submitted_at


def walk(form, since):
    """One sync run through the selector (the HTTP rate limit would cap a busy reader)."""
    seen, after = [], None
    while True:
        page = submissions_page(form.pk, order="asc", limit=7, since=since, after=after)
        seen += [uuid.UUID(json.loads(row)["id"]) for row in page.rows]
        if page.last is not None:  # oldest first: the last row is the newest
            since = max(since, page.last.submitted_at) if since else page.last.submitted_at
        if not page.has_more:
            return seen, since
        after = page.last


def test_many_writers_committing_out_of_order_lose_no_row_to_a_reader(form, raw_connection):
    writers, per_writer = 6, 25
    committed: list[uuid.UUID] = []
    lock = threading.Lock()

    def write(seed: int) -> None:
        rng = random.Random(seed)
        with lock:
            conn = raw_connection()
        for n in range(per_writer):
            ident = insert_open(conn, form.pk, f"{seed}-{n}")
            time.sleep(rng.uniform(0, 0.02))  # commit after others stamped later
            conn.commit()
            with lock:
                committed.append(ident)

    threads = [threading.Thread(target=write, args=(seed,)) for seed in range(writers)]
    for thread in threads:
        thread.start()
    synced: set[uuid.UUID] = set()
    since = None
    while any(thread.is_alive() for thread in threads):
        seen, since = walk(form, since)
        assert len(seen) == len(set(seen))  # one walk never repeats a row
        synced.update(seen)
    for thread in threads:
        thread.join()
    seen, _ = walk(form, since)
    synced.update(seen)

    assert len(committed) == writers * per_writer
    assert synced == set(committed)


def pulled_within(puller, form, ident: str, seconds: float = 1.0) -> float:
    """How long after now the pull API first lists ``ident`` (newest first); fails past
    ``seconds``."""
    started = time.monotonic()
    while True:
        body = puller.get(LIST, {"formId": form.slug, "limit": 5}).json()
        if ident in [row["id"] for row in body["data"]]:
            return time.monotonic() - started
        assert time.monotonic() - started < seconds, f"{ident} not served within {seconds} s"
        time.sleep(0.1)


def test_a_session_holding_an_xid_does_not_hold_fresh_rows_back(
    puller, public, form, raw_connection
):
    idle = raw_connection()  # idle in transaction, with a transaction id (any write would do)
    idle.execute("SELECT pg_current_xact_id()")
    answer = submit(public, form, {"name": "Fresh"})
    assert answer.status_code == 200

    assert pulled_within(puller, form, answer.json()["id"]) < 1.0
    stream = puller.get("/api/v1/submissions/stream", {"formId": form.slug})
    assert answer.json()["id"] in b"".join(stream.streaming_content).decode()
    idle.rollback()


def test_a_slow_export_download_does_not_hold_the_pull_api_back(
    owner_api, puller, public, form
):
    Submission.objects.bulk_create(  # more than the socket buffers hold: COPY stays running
        (Submission(form=form, data=[["note", "x" * 1500], ["n", str(n)]])
         for n in range(10000)), batch_size=2000)
    Form.objects.filter(pk=form.pk).update(field_names=["note", "n"])  # the CSV's columns
    feed.step(batch=10_000)  # old rows, placed long ago
    opened, finish = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def download() -> None:  # reads its first block, then stalls, as a slow client does
        try:
            response = owner_api.get(f"/api/v1/forms/{form.pk}/export", {"format": "csv"})
            blocks = iter(response.streaming_content)
            next(blocks)
            opened.set()
            finish.wait(10)
            response.close()
        except BaseException as error:  # reported by the test's thread
            failures.append(error)
            opened.set()
        finally:
            connection.close()

    reader = threading.Thread(target=download)
    reader.start()
    try:
        assert opened.wait(10) and not failures
        answer = submit(public, form, {"name": "During the download"})
        assert answer.status_code == 200
        assert pulled_within(puller, form, answer.json()["id"]) < 1.0
    finally:
        finish.set()
        reader.join()
    assert not failures


@pytest.fixture
def roles(raw_connection):
    """Two login roles, neither a superuser, with what the service needs: one the reader runs
    as (SET ROLE on the test's connection), one other writers connect as. Neither can see the
    other's sessions in pg_stat_activity."""
    suffix = uuid.uuid4().hex[:8]
    names = {"reader": f"ff_reader_{suffix}", "writer": f"ff_writer_{suffix}"}
    admin = raw_connection()
    admin.autocommit = True
    for name in names.values():
        admin.execute(f"CREATE ROLE {name} LOGIN NOSUPERUSER")
        admin.execute(f"GRANT USAGE ON SCHEMA public TO {name}")
    admin.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {names['reader']}")
    admin.execute(f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {names['reader']}")
    admin.execute(f"GRANT INSERT ON submissions_submission TO {names['writer']}")
    with connection.cursor() as cursor:
        cursor.execute(f"SET ROLE {names['reader']}")
    yield names
    with connection.cursor() as cursor:
        cursor.execute("RESET ROLE")
    admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                  "WHERE usename = ANY(%s)", [list(names.values())])
    for name in names.values():
        admin.execute(f"DROP OWNED BY {name}")
        admin.execute(f"DROP ROLE {name}")


def connect_as(role: str) -> psycopg.Connection:
    params = connection.get_connection_params()
    for name in ("cursor_factory", "context", "prepare_threshold", "server_side_binding",
                 "password"):
        params.pop(name, None)
    return psycopg.connect(**{**params, "user": role})


def test_a_row_written_under_another_role_is_not_skipped(puller, form, roles):
    with connect_as(roles["writer"]) as late_writer:
        late = insert_open(late_writer, form.pk, "late")  # another role: invisible to us
        time.sleep(0.01)
        early = add_submission(form, {"n": "early"})

        first_run, since = http_sync(puller, form, None)
        late_writer.commit()
        second_run, _ = http_sync(puller, form, since)

    assert first_run == [str(early.pk)]
    assert set(first_run) | set(second_run) == {str(late), str(early.pk)}


def test_writers_under_another_role_lose_no_row_to_a_paging_reader(form, roles):
    writers, per_writer = 4, 20
    committed: list[uuid.UUID] = []
    lock = threading.Lock()

    def write(seed: int) -> None:
        rng = random.Random(seed)
        with connect_as(roles["writer"]) as conn:
            for n in range(per_writer):
                ident = insert_open(conn, form.pk, f"{seed}-{n}")
                time.sleep(rng.uniform(0, 0.02))
                conn.commit()
                with lock:
                    committed.append(ident)

    threads = [threading.Thread(target=write, args=(seed,)) for seed in range(writers)]
    for thread in threads:
        thread.start()
    synced: set[uuid.UUID] = set()
    since = None
    while any(thread.is_alive() for thread in threads):
        seen, since = walk(form, since)
        assert len(seen) == len(set(seen))
        synced.update(seen)
    for thread in threads:
        thread.join()
    seen, _ = walk(form, since)
    synced.update(seen)

    assert len(committed) == writers * per_writer
    assert synced == set(committed)


def test_a_rescued_submission_enters_the_feed_at_the_rescue(owner_api, puller, form):
    from submissions.intake.store import submission_hold

    held = submission_hold(form=form, data=[["name", "Real"]], ip=None, user_agent="",
                           origin="", verdict={"score": 1.0, "reasons": ["links"]})
    add_submission(form, {"name": "Later"})
    first_run, since = http_sync(puller, form, None)
    assert str(held.pk) not in first_run

    rescued = owner_api.post(f"/api/v1/forms/{form.pk}/submissions/{held.pk}/not-spam")
    assert rescued.status_code == 200
    second_run, _ = http_sync(puller, form, since)

    assert str(held.pk) in second_run

