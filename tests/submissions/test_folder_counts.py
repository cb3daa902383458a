"""The owner's list and the forms list give each folder's size from a maintained count
(submissions/folders.py), exact through marks, rescues, deletes and purges."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F

from core import clock as clock_module
from forms_app.models import Form
from integrations.jobs import purge
from submissions import folders
from submissions.intake.store import submission_hold
from submissions.models import FolderCount, Status, Submission
from tests.conftest import add_submission


def totals(api, form) -> dict[str, int]:
    base = f"/api/v1/forms/{form.pk}"
    inbox = api.get(f"{base}/submissions", {"status": "inbox"}).json()["total"]
    spam = api.get(f"{base}/submissions", {"status": "spam"}).json()["total"]
    listed = next(row for row in api.get("/api/v1/forms").json() if row["_id"] == str(form.pk))
    assert (listed["submissionCount"], listed["spamCount"]) == (inbox, spam)
    return {"inbox": inbox, "spam": spam}


def really(form) -> dict[str, int]:
    rows = Submission.objects.filter(form=form)
    return {status: rows.filter(status=status).count() for status in Status.values}


def checkpoint_everything(form) -> None:
    """Move both checkpoints past every row there is, as a long tail's read would."""
    for status in Status.values:
        folders.advance(form.pk, status)


def hold(form, at=None):
    held = submission_hold(form=form, data=[["name", "Bot"]], ip=None, user_agent="",
                           origin="", verdict={"score": 1.0, "reasons": ["links"]})
    if at is not None:
        Submission.objects.filter(pk=held.pk).update(submitted_at=at)
    return held


def test_total_comes_from_the_checkpoint_not_a_count(owner_api, form):
    for _ in range(3):
        add_submission(form, {"name": "Ada"})
    checkpoint_everything(form)
    assert totals(owner_api, form)["inbox"] == 3
    FolderCount.objects.filter(form=form, status=Status.INBOX).update(count=F("count") + 1000)

    assert totals(owner_api, form)["inbox"] == 1003
    add_submission(form, {"name": "Late"})
    assert totals(owner_api, form)["inbox"] == 1004  # the tail is counted on top


def test_marks_rescues_and_deletes_below_the_checkpoint_keep_it_exact(owner_api, form):
    old = clock_module.now() - timedelta(days=1)
    kept = [add_submission(form, {"n": str(i)}, at=old + timedelta(seconds=i)) for i in range(4)]
    held = hold(form, at=old)
    checkpoint_everything(form)
    base = f"/api/v1/forms/{form.pk}/submissions"

    assert owner_api.post(f"{base}/{kept[0].pk}/spam").status_code == 200
    assert owner_api.post(f"{base}/{kept[0].pk}/spam").status_code == 200  # again: no change
    assert owner_api.post(f"{base}/{held.pk}/not-spam").status_code == 200
    assert owner_api.delete(f"{base}/{kept[1].pk}").status_code == 204
    assert owner_api.post(f"{base}/{kept[0].pk}/not-spam").status_code == 200

    assert totals(owner_api, form) == really(form) == {"inbox": 4, "spam": 0}


def test_purges_below_the_checkpoint_keep_it_exact(owner_api, form):
    now = clock_module.now()
    for days in (40, 35, 1):
        hold(form, at=now - timedelta(days=days))
        add_submission(form, {"n": "x"}, at=now - timedelta(days=days))
    checkpoint_everything(form)
    Form.objects.filter(pk=form.pk).update(retention_days=30)

    purge()

    assert totals(owner_api, form) == really(form) == {"inbox": 1, "spam": 1}


def test_a_long_tail_is_folded_in_when_read(owner_api, form, monkeypatch):
    monkeypatch.setattr(folders, "ADVANCE_AT", 3)
    now = clock_module.now()
    for seconds in (3, 2, 1):  # distinct stamps, as in the hourly job's test
        add_submission(form, {"name": "Ada"}, at=now - timedelta(seconds=seconds))

    assert totals(owner_api, form)["inbox"] == 3
    checkpoint = FolderCount.objects.get(form=form, status=Status.INBOX)
    # The read placed the rows in the feed and counted them up to its last position.
    assert checkpoint.counted_upto is not None and checkpoint.count == 3
    assert totals(owner_api, form)["inbox"] == 3


def test_the_hourly_job_folds_every_tail_in(form):
    now = clock_module.now()
    for seconds in (2, 1):
        add_submission(form, {"name": "Ada"}, at=now - timedelta(seconds=seconds))
    hold(form)

    purge()

    # Every row committed is placed, and counted by its folder's checkpoint.
    assert FolderCount.objects.get(form=form, status=Status.INBOX).count == 2
    assert FolderCount.objects.get(form=form, status=Status.SPAM).count == 1
    assert {status: folders.size(form.pk, status) for status in Status.values} == really(form)


def test_a_form_made_outside_the_app_is_counted_from_its_rows(owner_api, form):
    add_submission(form, {"name": "Ada"})
    FolderCount.objects.filter(form=form).delete()

    assert totals(owner_api, form)["inbox"] == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_counts_stay_exact_while_marks_race_checkpoints(form, monkeypatch):
    """Marks, rescues and deletes in several connections while others move the checkpoints:
    a mark that slipped between a checkpoint's count and its move would be counted twice or
    not at all."""
    from submissions.services import (
        submission_delete,
        submission_mark_spam,
        submission_rescue,
    )

    monkeypatch.setattr(folders, "ADVANCE_AT", 1)
    old = clock_module.now() - timedelta(minutes=5)
    rows = [add_submission(form, {"n": str(i)}, at=old + timedelta(milliseconds=i))
            for i in range(60)]
    errors: list[BaseException] = []

    def run(work) -> None:
        try:
            work()
        except BaseException as error:  # reported by the assertion below
            errors.append(error)
        finally:
            connection.close()

    def marker(mine) -> None:
        for i, row in enumerate(mine):
            submission = Submission.objects.get(pk=row.pk)
            if i % 3 == 2:
                submission_delete(submission=submission)
                continue
            marked = submission_mark_spam(submission=submission)
            if i % 3 == 1:
                submission_rescue(submission=marked)

    def reader() -> None:
        for _ in range(40):
            for status in Status.values:
                folders.advance(form.pk, status)

    threads = [threading.Thread(target=run, args=(lambda m=rows[i::3]: marker(m),))
               for i in range(3)]
    threads += [threading.Thread(target=run, args=(reader,)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert {status: folders.size(form.pk, status) for status in Status.values} == really(form)


def test_the_forms_list_counts_all_forms_at_once(owner_api, user, form):
    """Listing ten forms costs the statements listing one does: the folder sizes of the whole
    list are read together, not two statements a form."""
    from django.test.utils import CaptureQueriesContext

    from forms_app.services import form_create

    def statements() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert owner_api.get("/api/v1/forms").status_code == 200
        return len(captured)

    add_submission(form, {"name": "Ada"})
    one = statements()
    for i in range(9):
        add_submission(form_create(owner=user, name=f"Form {i}"), {"name": "Ada"})

    assert statements() == one
    assert totals(owner_api, form) == {"inbox": 1, "spam": 0}
