"""A stored file deleted on its own in the admin: its bytes go back to the quota once, its
object leaves the store, and the owner's log says so (name and size, never content)."""

from __future__ import annotations

import pytest

from accounts.models import User
from audit.models import Entry
from files.models import StorageUsage, StoredFile
from submissions.models import Submission
from tests.files.helpers import PDF, PNG, post, upload, upload_form

pytestmark = pytest.mark.django_db

FILES = "/admin/files/storedfile/"


@pytest.fixture
def sent(public, user, store):
    form = upload_form(user)
    assert post(public, form, {"cv": upload("cv.pdf", PDF),
                               "photo": upload("me.png", PNG)}).status_code == 200
    return Submission.objects.get()


def used(user) -> int:
    return StorageUsage.objects.get(owner=user).used


def delete_page(admin_client, row: StoredFile):
    return admin_client.post(f"{FILES}{row.pk}/delete/", {"post": "yes"})


def delete_action(admin_client, rows: list[StoredFile]):
    return admin_client.post(FILES, {"action": "delete_selected", "post": "yes",
                                     "_selected_action": [str(row.pk) for row in rows]})


@pytest.mark.parametrize("how", [delete_page, lambda client, row: delete_action(client, [row])],
                         ids=["page", "action"])
def test_a_file_deleted_in_the_admin_gives_its_bytes_back(
        how, admin_client, sent, store, user, django_capture_on_commit_callbacks):
    cv, photo = StoredFile.objects.order_by("position")

    with django_capture_on_commit_callbacks(execute=True):
        response = how(admin_client, cv)

    assert response.status_code == 302
    assert used(user) == len(PNG)
    assert list(StoredFile.objects.all()) == [photo]
    assert store.keys() == [photo.key]
    entry = Entry.objects.get(action="file.deleted")
    assert (entry.owner_id, entry.actor_email, entry.target_type, entry.target_id) == (
        user.pk, "admin@example.com", "file", str(cv.pk))
    assert entry.details == {"name": "cv.pdf", "size": len(PDF)}


def test_deleting_the_same_file_again_changes_nothing(admin_client, sent, store, user,
                                                      django_capture_on_commit_callbacks):
    """Twice over HTTP, then by a delete that read the row before the first removed it (as
    two operators at once): the bytes go back once, and one entry is written."""
    from django.contrib.admin.sites import site
    from django.test import RequestFactory

    cv = StoredFile.objects.get(name="cv.pdf")
    with django_capture_on_commit_callbacks(execute=True):
        assert delete_page(admin_client, cv).status_code == 302
        assert delete_page(admin_client, cv).status_code == 302  # "does not exist"
        delete_action(admin_client, [cv])
        request = RequestFactory().post(FILES)
        request.user = User.objects.get(email="admin@example.com")
        site._registry[StoredFile].delete_model(request, cv)  # the stale row

    assert used(user) == len(PNG)
    assert StoredFile.objects.count() == 1 and len(store.keys()) == 1
    assert Entry.objects.filter(action="file.deleted").count() == 1


def test_a_bulk_delete_gives_back_every_files_bytes(admin_client, sent, store, user,
                                                    django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        delete_action(admin_client, list(StoredFile.objects.all()))

    assert used(user) == 0 and store.keys() == [] and not StoredFile.objects.exists()
    assert sorted(entry.details["name"] for entry in Entry.objects.filter(
        action="file.deleted")) == ["cv.pdf", "me.png"]


def test_a_file_cannot_be_changed_or_added_in_the_admin(admin_client, sent, store):
    cv = StoredFile.objects.get(name="cv.pdf")

    changed = admin_client.post(f"{FILES}{cv.pk}/change/", {"key": "elsewhere", "size": "1"})

    assert changed.status_code == 403
    assert admin_client.get(f"{FILES}add/").status_code == 403
    assert StoredFile.objects.get(pk=cv.pk).key == cv.key
