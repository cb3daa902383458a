"""The storage quota is exact under concurrent uploads: reserved in the database, in one
conditional UPDATE per submission, before any file is stored."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.test import Client

from files.models import StorageUsage, StoredFile
from submissions.models import Submission
from tests.conftest import make_user
from tests.files.helpers import PNG, post, upload, upload_form

UPLOADERS = 12
ROOM_FOR = 5


# On PostgreSQL, as the other concurrency tests: the SQLite test database is one in-memory
# file shared by threads, which answers concurrent writers "table is locked" (a file database
# takes one writer at a time, which makes the conditional UPDATE exact there by itself).
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_uploads_never_pass_the_quota(store, settings):
    settings.DEFAULT_STORAGE_QUOTA_BYTES = ROOM_FOR * len(PNG) + len(PNG) // 2
    owner = make_user()
    form = upload_form(owner)
    start = threading.Barrier(UPLOADERS)

    def one(i: int) -> int:
        try:
            start.wait()
            return post(Client(), form, {"photo": upload(f"{i}.png", PNG)},
                        REMOTE_ADDR=f"10.0.0.{i + 1}").status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=UPLOADERS) as pool:
        codes = list(pool.map(one, range(UPLOADERS)))

    assert sorted(codes) == [200] * ROOM_FOR + [413] * (UPLOADERS - ROOM_FOR)
    assert Submission.objects.count() == ROOM_FOR
    assert StoredFile.objects.count() == ROOM_FOR
    assert len(store.keys()) == ROOM_FOR
    assert StorageUsage.objects.get(owner=owner).used == ROOM_FOR * len(PNG)
