"""A storage failure (a full disk, an unwritable folder, an unreachable store) answers
`503 storage_unavailable` with `Retry-After`, stores and counts nothing, and leaves no file
or part of one behind; the orphan sweep removes what a killed web process left; an account's
first uploads arriving together are never refused a quota they have room in."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.management import call_command
from django.db import connection
from django.test import Client

from accounts import quota
from config.storage import uploads_storage
from files import links
from files.models import StorageUsage, StoredFile
from files.services import orphan_objects_sweep, storage
from submissions.models import Submission
from tests.conftest import make_user
from tests.files.conftest import LocalStore
from tests.files.helpers import PNG, post, upload, upload_form

FILE_BYTES = 12 * 1024
POSTS = 40
DISK = "256k"


def picture(i: int, which: str) -> bytes:
    """A PNG of FILE_BYTES, different for every post, so a mixed-up file shows."""
    return PNG + f"{i}{which}".encode() * ((FILE_BYTES - len(PNG)) // 4)


def send(client, form, i: int):
    return post(client, form, {"name": f"n{i}", "a": upload(f"{i}a.png", picture(i, "a")),
                               "b": upload(f"{i}b.png", picture(i, "b"))},
                REMOTE_ADDR=f"10.1.{i // 200}.{i % 200 + 1}")


@pytest.fixture
def full_disk(settings, tmp_path) -> Iterator[LocalStore]:
    """A storage folder on a 256 KiB tmpfs: room for a few posts, then ENOSPC."""
    root = tmp_path / "uploads"
    root.mkdir()
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("CI runs as root: the full-disk test must mount its tmpfs there")
        pytest.skip("mounting a 256 KiB tmpfs for the full-disk test needs root (CI runs as "
                    "root); test_an_unwritable_folder covers storage failures without it")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK},mode=0700", "tmpfs",
                              str(root)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.fail(f"could not mount a tmpfs as root: {mounted.stderr.strip()}")
    chosen = LocalStore(root)
    settings.STORAGES = {**settings.STORAGES, "uploads": chosen.setting()}
    yield chosen
    subprocess.run(["umount", str(root)], check=True)


def assert_unavailable(response) -> None:
    assert response.status_code == 503
    assert response["Retry-After"] == "60"
    message = "File storage is unavailable right now. Please try again shortly."
    assert response.json() == {
        "success": False, "error": "storage_unavailable", "message": message,
        "errors": [{"code": "UNSPECIFIED", "message": message}]}  # Formspree's clients read it


def download(row: StoredFile) -> bytes:
    response = Client().get(f"/api/v1/files/{row.pk}?sig={links.signature(row.pk)}")
    assert response.status_code == 200
    return b"".join(response.streaming_content)


def assert_whole_and_nothing_else(store: LocalStore, owner, accepted: int) -> None:
    """Every stored submission has both its files, byte for byte; every object in the store is
    one of them; the quota and the month count exactly what was accepted."""
    assert Submission.objects.count() == accepted
    rows = list(StoredFile.objects.order_by("name"))
    assert len(rows) == 2 * accepted
    for submission in Submission.objects.all():
        i = int(dict(submission.data)["name"][1:])
        files = {row.name: row for row in rows if row.submission_id == submission.pk}
        assert {name: download(row) for name, row in files.items()} == {
            f"{i}a.png": picture(i, "a"), f"{i}b.png": picture(i, "b")}
    assert store.keys() == sorted(row.key for row in rows)
    assert StorageUsage.objects.get(owner=owner).used == sum(row.size for row in rows)
    assert quota.used(owner.pk) == accepted


@pytest.mark.django_db
def test_a_full_disk_answers_503_and_leaves_no_file_behind(full_disk, user, public):
    form = upload_form(user, maxBytes=2 * FILE_BYTES)

    responses = [send(public, form, i) for i in range(POSTS)]

    accepted = [r for r in responses if r.status_code == 200]
    refused = [r for r in responses if r.status_code != 200]
    assert accepted and refused
    for response in refused:
        assert_unavailable(response)
    assert_whole_and_nothing_else(full_disk, user, len(accepted))


# On PostgreSQL, as the other concurrency tests: SQLite's test database takes one writer at a
# time, so uploads there cannot overlap.
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_uploads_filling_the_disk_get_200_or_503_and_leave_nothing(full_disk):
    owner = make_user()
    form = upload_form(owner, maxBytes=2 * FILE_BYTES)
    start = threading.Barrier(8)

    def one(i: int):
        try:
            if i < 8:
                start.wait()
            return send(Client(), form, i)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        responses = list(pool.map(one, range(POSTS)))

    accepted = [r for r in responses if r.status_code == 200]
    for response in responses:
        if response.status_code != 200:
            assert_unavailable(response)
    assert accepted and len(accepted) < POSTS
    assert_whole_and_nothing_else(full_disk, owner, len(accepted))


@pytest.mark.django_db
def test_an_unwritable_folder_answers_503_and_counts_nothing(settings, tmp_path, user, public):
    # A file where the folder should be: no user, root included, can write under it.
    blocked = tmp_path / "uploads"
    blocked.write_bytes(b"")
    settings.STORAGES = {**settings.STORAGES, "uploads": LocalStore(blocked).setting()}
    form = upload_form(user, maxBytes=2 * FILE_BYTES)

    assert_unavailable(send(public, form, 1))

    assert not Submission.objects.exists() and not StoredFile.objects.exists()
    assert not StorageUsage.objects.filter(used__gt=0).exists()
    assert quota.used(user.pk) == 0
    assert blocked.read_bytes() == b""


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _unreachable_s3(settings, monkeypatch) -> None:
    """An S3 store whose address refuses connections."""
    for name, value in {"S3_ENDPOINT_URL": f"http://127.0.0.1:{_closed_port()}",
                        "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    settings.STORAGES = {**settings.STORAGES,
                         "uploads": uploads_storage("s3://nowhere/files", Path("/unused"))}


@pytest.mark.django_db
def test_an_unreachable_store_answers_503_and_counts_nothing(settings, monkeypatch, user,
                                                             public):
    _unreachable_s3(settings, monkeypatch)
    form = upload_form(user, maxBytes=2 * FILE_BYTES)

    assert_unavailable(send(public, form, 1))

    assert not Submission.objects.exists() and not StoredFile.objects.exists()
    assert quota.used(user.pk) == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_ten_first_uploads_of_a_new_account_at_once_are_all_accepted(store):
    owner = make_user()
    form = upload_form(owner, maxBytes=2 * FILE_BYTES)
    start = threading.Barrier(10)

    def one(i: int) -> int:
        try:
            start.wait()
            return send(Client(), form, i).status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=10) as pool:
        codes = list(pool.map(one, range(10)))

    assert codes == [200] * 10
    assert StorageUsage.objects.get(owner=owner).used == sum(
        len(picture(i, "a")) + len(picture(i, "b")) for i in range(10))


@pytest.fixture
def stored_row(public, user, store) -> StoredFile:
    form = upload_form(user, maxBytes=2 * FILE_BYTES)
    assert post(public, form, {"a": upload("a.png", PNG)}).status_code == 200
    return StoredFile.objects.get()


def _leftover(user) -> str:
    """An object as a web process killed between writing it and its row leaves it."""
    return storage().save(f"{user.pk.hex}/{os.urandom(16).hex()}", ContentFile(b"part"))


@pytest.mark.django_db
def test_the_sweep_removes_an_object_no_row_names_once_old(user, stored_row, store, clock):
    _leftover(user)
    clock.advance(hours=1, seconds=1)

    assert orphan_objects_sweep() == 1

    assert store.keys() == [stored_row.key]
    assert download(stored_row) == PNG


@pytest.mark.django_db
def test_the_sweep_keeps_a_young_object_whose_row_may_be_coming(user, stored_row, store,
                                                                clock):
    young = _leftover(user)
    clock.advance(minutes=50)

    assert orphan_objects_sweep() == 0

    assert store.keys() == sorted([young, stored_row.key])


@pytest.mark.django_db
def test_the_sweep_never_removes_what_it_did_not_name(user, stored_row, store, clock):
    others = [storage().save(name, ContentFile(b"not ours")) for name in (
        "lost+found/x", f"{user.pk.hex}/notes.txt", "README")]
    clock.advance(days=30)

    assert orphan_objects_sweep() == 0

    assert store.keys() == sorted([*others, stored_row.key])


@pytest.mark.django_db
def test_the_sweep_never_removes_an_old_object_with_a_row(stored_row, store, clock):
    clock.advance(days=30)

    assert orphan_objects_sweep() == 0

    assert store.keys() == [stored_row.key]


@pytest.mark.django_db
def test_the_hourly_purge_runs_the_sweep(user, stored_row, store, clock):
    _leftover(user)
    clock.advance(hours=2)

    call_command("purge", stdout=(out := StringIO()))

    assert "orphan_stored_objects: 1 deleted" in out.getvalue()
    assert store.keys() == [stored_row.key]


@pytest.mark.django_db
def test_a_download_while_the_store_is_unreachable_answers_503(stored_row, settings,
                                                               monkeypatch):
    _unreachable_s3(settings, monkeypatch)

    response = Client().get(f"/api/v1/files/{stored_row.pk}?sig={links.signature(stored_row.pk)}")

    assert_unavailable_json(response)


def assert_unavailable_json(response) -> None:
    assert response.status_code == 503
    assert response["Retry-After"] == "60"
    assert response.json() == {
        "error": "storage_unavailable",
        "message": "File storage is unavailable right now. Please try again shortly."}
