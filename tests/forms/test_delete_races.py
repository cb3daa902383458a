"""Deleting races nothing into an error (contract, "Exactness under concurrency"): a form
deleted while submissions arrive and workers deliver them answers 204; each racing
submission is stored (and then deleted with the form) or 404; no request answers 500 or
503, no worker fails, PostgreSQL breaks no deadlock, and nothing of the form is left.

The attacker's side of issue 41: 18 keyed posts racing the delete made it fail at COMMIT
(a submission committed after the delete had read the form's rows) in 12 of 12 trials."""

from __future__ import annotations

import logging
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from accounts import quota
from config.storage import uploads_storage
from files.models import StorageUsage, StoredFile
from forms_app.models import Form
from forms_app.services import form_create
from integrations.delivery import worker
from integrations.models import Delivery, DeliveryAttempt, OwnerDigest, OwnerNotice
from integrations.services import integration_create
from submissions.models import FolderCount, IdempotencyKey, Submission
from tests.conftest import add_submission, bearer, make_user
from tests.fakes import FakeServer, Reply
from tests.files.helpers import PNG, UPLOADS, body, upload

POSTS = 20
ROUNDS = 5

pytestmark = pytest.mark.django_db(transaction=True)


def _post(form: Form, kind: str, n: int) -> int:
    extra = {"REMOTE_ADDR": f"10.9.{n // 200}.{n % 200 + 1}", "HTTP_ACCEPT": "application/json"}
    client = Client()
    url = f"/api/v1/f/{form.slug}"
    if kind == "keyed":
        extra["HTTP_IDEMPOTENCY_KEY"] = f"key-{n}"
    if n % 3 == 0:  # one in three brings a file to store
        response = client.post(url, body({"name": f"n{n}", "photo": upload(f"{n}.png", PNG)}),
                               content_type="multipart/form-data; boundary=BoUnDaRyFf", **extra)
    else:
        response = client.post(url, {"name": f"n{n}"}, content_type="application/json", **extra)
    return response.status_code


def _delete(form: Form, owner) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=bearer(owner))
    return client.delete(f"/api/v1/forms/{form.pk}").status_code


def _closing(call, *args) -> int:
    try:
        return call(*args)
    finally:
        connection.close()


def _deliver_until(stop: threading.Event, errors: list) -> None:
    """A worker beside the requests: it claims and attempts what they left due."""
    try:
        while not stop.is_set():
            if not worker.deliveries_run_due():
                time.sleep(0.01)
    except Exception as error:  # reported by the test
        errors.append(error)
    finally:
        connection.close()


def _race(form: Form, owner, kind: str) -> tuple[int, list[int]]:
    """POSTS posts and the delete released together, the delete a little after the first
    posts, while a worker delivers: the delete's answer and the posts'."""
    start = threading.Barrier(POSTS + 1)

    def post(n: int) -> int:
        start.wait()
        return _post(form, kind, n)

    def delete() -> int:
        start.wait()
        time.sleep(random.uniform(0.01, 0.12))
        return _delete(form, owner)

    with ThreadPoolExecutor(max_workers=POSTS + 1) as pool:
        posts = [pool.submit(_closing, post, n) for n in range(POSTS)]
        deleted = pool.submit(_closing, delete)
        return deleted.result(timeout=60), [done.result(timeout=60) for done in posts]


def _left_of(form_id, owner) -> dict[str, int]:
    """Every row that could outlive the form, counted."""
    return {
        "submissions": Submission.objects.filter(form_id=form_id).count(),
        # Every delivery was of one of the form's submissions.
        "deliveries": Delivery.objects.filter(integration__owner=owner).count(),
        "attempts": DeliveryAttempt.objects.filter(delivery__integration__owner=owner).count(),
        "files": StoredFile.objects.filter(form_id=form_id).count(),
        "keys": IdempotencyKey.objects.filter(form_id=form_id).count(),
        "folders": FolderCount.objects.filter(form_id=form_id).count(),
        "notices": OwnerNotice.objects.filter(form_id=form_id).count(),
        "digests": OwnerDigest.objects.filter(form_id=form_id).count(),
    }


@pytest.mark.parametrize("kind", ["keyed", "plain"])
def test_a_form_deleted_under_racing_posts_answers_204_and_leaves_nothing(
    shared_database, deadlocks, kind, settings, tmp_path, caplog
):
    uploads = tmp_path / "uploads"
    settings.STORAGES = {**settings.STORAGES,
                         "uploads": uploads_storage(f"file://{uploads}", tmp_path)}
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    caplog.set_level(logging.ERROR)
    owner = make_user()
    # The account's storage row made beforehand: its first uploads arriving together are
    # another race (contract, "File uploads"), not this test's.
    StorageUsage.objects.create(owner=owner)
    before = deadlocks()
    accepted = 0
    stop, errors = threading.Event(), []
    with FakeServer(lambda request: Reply(200)) as receiver:
        integration_create(owner=owner, type="WEBHOOK", config={"url": f"{receiver.url}/h"})
        delivering = threading.Thread(target=_deliver_until, args=(stop, errors))
        delivering.start()
        try:
            for _ in range(ROUNDS):
                # The owner is emailed each one too: its hourly count holds rows of the form.
                form = form_create(owner=owner, name="Racing", rate_limit=10_000,
                                   spam_filter=False, notify_owner=True,
                                   file_uploads=UPLOADS)
                deleted, answers = _race(form, owner, kind)

                assert deleted == 204
                assert set(answers) <= {200, 404}, answers
                accepted += answers.count(200)
                assert not Form.objects.filter(pk=form.pk).exists()
                assert _left_of(form.pk, owner) == dict.fromkeys(_left_of(form.pk, owner), 0)
        finally:
            stop.set()
            delivering.join(timeout=30)

    assert errors == []
    assert [record.getMessage() for record in caplog.records] == []
    # Each stored submission counted once, and a 404 nothing.
    assert quota.used(owner.pk) == accepted
    assert not [path for path in uploads.rglob("*") if path.is_file()]
    assert StorageUsage.objects.filter(owner=owner, used__gt=0).count() == 0
    assert deadlocks() == before


def test_deletes_and_counts_that_waited_for_a_form_delete_end_cleanly(shared_database,
                                                                       monkeypatch):
    """The form's delete holds its folder checkpoints, submissions and row; meanwhile the
    owner deletes one of its submissions, retention purges another, and the hourly job
    counts its folders. Each waits for the delete and then finds the form gone: made afresh
    for a deleted form, their checkpoints failed the foreign key at commit (500, and a
    failed job)."""
    from integrations import on_forms
    from submissions import folders
    from submissions.services import retention_purge

    owner = make_user()
    form = form_create(owner=owner, name="Going", retention_days=1, notify_owner=False)
    kept = add_submission(form, {"name": "kept"})
    add_submission(form, {"name": "old"}, at=timezone.now() - timedelta(days=3))
    held, go = threading.Event(), threading.Event()
    real_hold = on_forms.deliveries_hold

    def hold_then_wait(chosen) -> None:
        real_hold(chosen)
        held.set()
        go.wait(timeout=10)

    monkeypatch.setattr(on_forms, "deliveries_hold", hold_then_wait)
    owner_client = APIClient()
    owner_client.credentials(HTTP_AUTHORIZATION=bearer(owner))

    with ThreadPoolExecutor(max_workers=4) as pool:
        deleting = pool.submit(_closing, _delete, form, owner)
        assert held.wait(timeout=10)
        one = pool.submit(_closing, lambda: owner_client.delete(
            f"/api/v1/forms/{form.pk}/submissions/{kept.pk}").status_code)
        purged = pool.submit(_closing, retention_purge)
        counted = pool.submit(_closing, folders.advance, form.pk, "inbox")
        time.sleep(0.3)  # each is waiting for the delete now
        go.set()

        assert deleting.result(timeout=30) == 204
        assert one.result(timeout=30) in (204, 404)
        assert purged.result(timeout=30) == 0  # the form's delete took it
        assert counted.result(timeout=30) is None
    assert not Submission.objects.filter(form_id=form.pk).exists()
    assert not FolderCount.objects.filter(form_id=form.pk).exists()


@pytest.mark.postgres
def test_a_steady_flood_of_posts_never_runs_a_form_delete_out_of_passes(shared_database,
                                                                        monkeypatch):
    """The worst flood: a post commits between every read of the form's submissions and
    the take of its row. Each pass found a row it had not held and gave the form back, so
    the delete ran out of its 20 passes and then locked submissions after the form, the
    order a worker holding one and waiting for the form deadlocks against. From the
    outside, 8 clients posting to a form while it was deleted ran it out of passes, a
    form of 3,000 submissions took 10 passes. The rows that came meanwhile are now held
    with the form, never waiting for one: the first pass ends it."""
    from submissions import services

    owner = make_user()
    form = form_create(owner=owner, name="Flooded", rate_limit=10_000, spam_filter=False,
                       notify_owner=False)
    real_read, real_take = services._hold_submissions, services._hold_form
    posted, takes = [], []

    def read_then_one_more_arrives(form_id, **how):
        rows = real_read(form_id, **how)
        if not how and len(posted) < services.FORM_LOCK_PASSES:
            with ThreadPoolExecutor(max_workers=1) as other:
                posted.append(other.submit(_closing, _post, form, "plain",
                                           len(posted) * 3 + 1).result(timeout=30))
        return rows

    def take(form_id):
        takes.append(form_id)
        real_take(form_id)

    monkeypatch.setattr(services, "_hold_submissions", read_then_one_more_arrives)
    monkeypatch.setattr(services, "_hold_form", take)

    assert _delete(form, owner) == 204
    assert set(posted) == {200}
    assert len(takes) == 1  # once, and kept
    assert not Submission.objects.filter(form_id=form.pk).exists()
