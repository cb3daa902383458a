"""Files follow their submission: gone from the store, and from the quota, by every path."""

from __future__ import annotations

from datetime import timedelta

import pytest

from files.models import StorageUsage, StoredFile
from files.services import delete_files_of
from submissions.models import Status, Submission
from submissions.services import orphan_files_purge, retention_purge, spam_purge
from tests.files.helpers import PDF, PNG, post, upload, upload_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def form(user):
    return upload_form(user)


@pytest.fixture
def sent(public, form, store):
    assert post(public, form, {"cv": upload("cv.pdf", PDF),
                               "photo": upload("me.png", PNG)}).status_code == 200
    assert len(store.keys()) == 2
    return Submission.objects.get()


def all_gone(store, user) -> bool:
    usage = StorageUsage.objects.get(owner=user)
    return store.keys() == [] and not StoredFile.objects.exists() and usage.used == 0


def age(submission, days: int) -> None:
    Submission.objects.filter(pk=submission.pk).update(
        submitted_at=submission.submitted_at - timedelta(days=days))


def test_the_owners_delete_removes_the_files(owner_api, form, sent, store, user):
    response = owner_api.delete(f"/api/v1/forms/{form.pk}/submissions/{sent.pk}")

    assert response.status_code == 204
    assert all_gone(store, user)


def test_the_dashboards_delete_removes_the_files(client, user, form, sent, store):
    from tests.conftest import PASSWORD

    client.post("/dashboard/login", {"email": user.email, "password": PASSWORD})
    client.post(f"/dashboard/forms/{form.pk}/submissions/{sent.pk}/delete", {"page": "1"})

    assert not Submission.objects.exists()
    assert all_gone(store, user)


def test_retention_removes_the_files(form, sent, store, user,
                                     django_capture_on_commit_callbacks):
    form.retention_days = 1
    form.save()
    age(sent, 2)

    with django_capture_on_commit_callbacks(execute=True):  # files go once the rows have
        assert retention_purge() == 1
    assert all_gone(store, user)


def test_the_spam_purge_removes_the_files(form, sent, store, user,
                                          django_capture_on_commit_callbacks):
    Submission.objects.filter(pk=sent.pk).update(status=Status.SPAM)
    age(sent, 31)

    with django_capture_on_commit_callbacks(execute=True):
        assert spam_purge() == 1
    assert all_gone(store, user)


def test_deleting_the_form_removes_the_files(owner_api, form, sent, store, user):
    assert owner_api.delete(f"/api/v1/forms/{form.pk}").status_code == 204

    assert all_gone(store, user)


def test_erasure_calls_the_one_function(form, sent, store, user,
                                        django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert delete_files_of([sent.pk]) == 2
        assert delete_files_of([sent.pk]) == 0  # twice gives nothing back twice

    assert all_gone(store, user)


def test_files_whose_submission_never_came_are_purged_after_a_day(
    form, sent, store, user, clock, django_capture_on_commit_callbacks
):
    Submission.objects.filter(pk=sent.pk).delete()  # as if the process died before storing it

    assert orphan_files_purge() == 0
    clock.advance(days=1, seconds=1)
    with django_capture_on_commit_callbacks(execute=True):
        assert orphan_files_purge() == 2
    assert all_gone(store, user)


def test_the_freed_quota_takes_new_files(public, owner_api, form, sent, store, settings):
    settings.DEFAULT_STORAGE_QUOTA_BYTES = len(PDF) + len(PNG)
    assert post(public, form, {"cv": upload("cv.pdf", PDF)}).status_code == 413

    owner_api.delete(f"/api/v1/forms/{form.pk}/submissions/{sent.pk}")

    assert post(public, form, {"cv": upload("cv.pdf", PDF)}).status_code == 200


def test_the_admins_delete_removes_the_files(form, sent, store, user,
                                             django_capture_on_commit_callbacks):
    from django.contrib.admin.sites import site
    from django.test import RequestFactory

    from forms_app.models import Form

    request = RequestFactory().post("/admin/")
    with django_capture_on_commit_callbacks(execute=True):
        site._registry[Submission].delete_queryset(request, Submission.objects.all())
    assert all_gone(store, user)
    site._registry[Form].delete_model(request, form)
    assert not Form.objects.exists()


class RolledBack(Exception):
    pass


def test_a_rolled_back_form_delete_keeps_the_files(form, sent, store, user,
                                                   django_capture_on_commit_callbacks):
    """The store's objects go only once the deletion of their rows has committed."""
    from django.db import transaction

    from forms_app.models import Form
    from forms_app.services import form_delete

    keys, form_id = store.keys(), form.pk
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RolledBack), \
            transaction.atomic():
        form_delete(form=form)
        raise RolledBack

    assert store.keys() == keys
    assert StoredFile.objects.count() == 2
    assert StorageUsage.objects.get(owner=user).used == len(PDF) + len(PNG)
    with django_capture_on_commit_callbacks(execute=True):
        form_delete(form=Form.objects.get(pk=form_id))
    assert all_gone(store, user)


def test_a_failing_form_delete_keeps_the_files(form, sent, store, user, monkeypatch,
                                               django_capture_on_commit_callbacks):
    from forms_app.models import Form
    from forms_app.services import form_delete

    def fails(self, *args, **kwargs):
        raise RolledBack

    monkeypatch.setattr(Form, "delete", fails)
    keys = store.keys()
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RolledBack):
        form_delete(form=form)

    assert store.keys() == keys
    assert StoredFile.objects.count() == 2


def test_a_rolled_back_deletion_of_files_keeps_them(form, sent, store, user,
                                                    django_capture_on_commit_callbacks):
    from django.db import transaction

    keys = store.keys()
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RolledBack), \
            transaction.atomic():
        assert delete_files_of([sent.pk]) == 2
        raise RolledBack

    assert store.keys() == keys and StoredFile.objects.count() == 2


@pytest.mark.parametrize("how", ["page", "action"])
def test_deleting_an_account_in_the_admin_removes_its_files(
    how, admin_client, public, form, sent, store, user, other_user,
    django_capture_on_commit_callbacks,
):
    """The account's rows go by cascade: their objects go too, and only theirs."""
    theirs = upload_form(other_user)
    assert post(public, theirs, {"cv": upload("cv.pdf", PDF)}).status_code == 200
    kept = StoredFile.objects.get(owner=other_user).key

    with django_capture_on_commit_callbacks(execute=True):
        if how == "page":
            response = admin_client.post(f"/admin/accounts/user/{user.pk}/delete/",
                                         {"post": "yes"})
        else:
            response = admin_client.post("/admin/accounts/user/", {
                "action": "delete_selected", "_selected_action": [str(user.pk)],
                "post": "yes"})

    assert response.status_code == 302
    assert not StoredFile.objects.filter(owner_id=user.pk).exists()
    assert [row.key for row in StoredFile.objects.all()] == [kept]
    assert store.keys() == [kept]


def test_a_rolled_back_account_delete_keeps_its_files(form, sent, store, user,
                                                      django_capture_on_commit_callbacks):
    from django.db import transaction

    keys = store.keys()
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RolledBack), \
            transaction.atomic():
        user.delete()
        raise RolledBack

    assert store.keys() == keys and StoredFile.objects.count() == 2
