"""Cursors stay exact while writers commit out of order (PostgreSQL).

Submissions of one account are no longer committed one at a time, so a row stamped earlier can
commit later. These tests hold such a row open, or let many connections commit in random
order, while a reader syncs the way the spec tells clients to: page with ``order=asc`` and
``since`` the newest ``submittedAt`` seen, follow ``nextCursor``, upsert by ``id``. Paging by
time alone would skip the late row; the commit horizon (submissions/horizon.py) must not.
"""

import json
import random
import threading
import time
import uuid
from datetime import timedelta

import psycopg
import pytest
from django.db import connection

from pullapi.selectors import submissions_page
from submissions import horizon
from tests.conftest import add_submission

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
    second_run, _ = http_sync(puller, form, since)

    assert str(early.pk) not in first_run  # it waits behind the open transaction ...
    synced = set(first_run) | set(second_run)
    assert synced == {str(late), str(early.pk)}  # ... and nothing is skipped


def test_the_horizon_stops_at_the_oldest_open_writer(form, raw_connection):
    writer = raw_connection()
    insert_open(writer, form.pk, "open")
    query = "SELECT xact_start FROM pg_stat_activity WHERE pid = pg_backend_pid()"
    (opened,) = writer.execute(query).fetchone()

    assert horizon.committed_before() <= opened
    writer.commit()
    assert horizon.committed_before() > opened


def test_the_margin_applies_when_no_writer_is_open(form, monkeypatch):
    monkeypatch.setattr(horizon, "MARGIN", timedelta(milliseconds=250))
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement_timestamp()")
        (before,) = cursor.fetchone()

    assert horizon.committed_before() <= before - timedelta(milliseconds=200)


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
