"""An operator's quota for one account (StorageUsage.quota, set in the admin): it lets more
or less through than DEFAULT_STORAGE_QUOTA_BYTES, exactly as the default would."""

from __future__ import annotations

import pytest

from accounts.models import User
from files.models import StorageUsage, StoredFile
from tests.files.helpers import PDF, post, upload, upload_form

pytestmark = pytest.mark.django_db

USAGES = "/admin/files/storageusage/"


def send(api, form):
    return post(api, form, {"cv": upload("cv.pdf", PDF)})


def set_quota(admin_client, usage: StorageUsage, quota) -> object:
    return admin_client.post(f"{USAGES}{usage.pk}/change/", {"quota": quota})


def test_a_smaller_quota_lets_less_through(api, admin_client, user, store):
    form = upload_form(user)
    assert send(api, form).status_code == 200

    response = set_quota(admin_client, StorageUsage.objects.get(owner=user), len(PDF) + 1)

    assert response.status_code == 302
    refused = send(api, form)
    assert refused.status_code == 413
    assert refused.json()["details"] == {"cv": "is past the account's storage quota"}
    assert StoredFile.objects.count() == 1 and len(store.keys()) == 1


def test_a_larger_quota_lets_more_through(api, admin_client, user, store, settings):
    settings.DEFAULT_STORAGE_QUOTA_BYTES = len(PDF)
    form = upload_form(user)
    assert send(api, form).status_code == 200
    assert send(api, form).status_code == 413

    set_quota(admin_client, StorageUsage.objects.get(owner=user), 3 * len(PDF))

    assert [send(api, form).status_code for _ in range(3)] == [200, 200, 413]
    assert StorageUsage.objects.get(owner=user).used == 3 * len(PDF)


def test_clearing_the_quota_goes_back_to_the_default(api, admin_client, user, store):
    form = upload_form(user)
    send(api, form)
    usage = StorageUsage.objects.get(owner=user)
    set_quota(admin_client, usage, 0)
    assert send(api, form).status_code == 413

    set_quota(admin_client, usage, "")

    assert StorageUsage.objects.get(owner=user).quota is None
    assert send(api, form).status_code == 200


def test_a_quota_set_before_the_first_upload_holds(api, admin_client, user, store):
    response = admin_client.post(f"{USAGES}add/", {"owner": str(user.pk), "quota": "0"})

    assert response.status_code == 302
    assert StorageUsage.objects.get(owner=user).quota == 0
    assert send(api, upload_form(user)).status_code == 413
    assert store.keys() == []


def test_a_negative_quota_is_refused(admin_client, api, user, store):
    send(api, upload_form(user))
    usage = StorageUsage.objects.get(owner=user)

    response = set_quota(admin_client, usage, -1)

    assert response.status_code == 200  # the form again, with its error
    assert "Ensure this value is greater than or equal to 0." in response.content.decode()
    assert StorageUsage.objects.get(owner=user).quota is None


def test_bytes_used_cannot_be_changed_in_the_admin(admin_client, api, user, store):
    send(api, upload_form(user))
    usage = StorageUsage.objects.get(owner=user)

    admin_client.post(f"{USAGES}{usage.pk}/change/", {"quota": "5000", "used": "0"})

    usage.refresh_from_db()
    assert (usage.used, usage.quota) == (len(PDF), 5000)


def test_a_quota_saved_with_a_stale_count_keeps_the_uploads_bytes(admin_client, api, user,
                                                                  store, monkeypatch):
    """The admin read the row, then an upload took more bytes before the save: the save
    writes the quota alone, so the counter keeps the upload's bytes."""
    from django.contrib.admin.sites import site

    from files.services import storage_reserve

    send(api, upload_form(user))
    usage = StorageUsage.objects.get(owner=user)
    read = type(site._registry[StorageUsage]).get_object

    def read_then_upload(self, request, object_id, from_field=None):
        row = read(self, request, object_id, from_field)
        assert storage_reserve(owner_id=user.pk, size=100)  # lands between read and save
        return row

    monkeypatch.setattr(type(site._registry[StorageUsage]), "get_object", read_then_upload)
    response = set_quota(admin_client, usage, 5000)

    assert response.status_code == 302
    usage.refresh_from_db()
    assert (usage.used, usage.quota) == (len(PDF) + 100, 5000)


def test_a_quota_change_is_in_the_accounts_log(admin_client, api, user, store):
    from audit.models import Entry

    send(api, upload_form(user))
    usage = StorageUsage.objects.get(owner=user)

    set_quota(admin_client, usage, 5000)
    set_quota(admin_client, usage, 5000)  # saved unchanged: nothing to record

    entry = Entry.objects.get(action="storage.quota_changed")
    assert (entry.owner_id, entry.team_id, entry.actor_email) == (
        user.pk, None, "admin@example.com")
    assert (entry.target_type, entry.target_id, entry.details) == (
        "storage", str(user.pk), {"quota": 5000})


def test_a_quota_set_on_adding_the_row_is_in_the_log(admin_client, user):
    from audit.models import Entry

    admin_client.post(f"{USAGES}add/", {"owner": str(user.pk), "quota": ""})

    assert StorageUsage.objects.get(owner=user).quota is None
    assert Entry.objects.get(action="storage.quota_changed").details == {"quota": None}


def test_storage_usage_cannot_be_deleted_in_the_admin(admin_client, api, user, store):
    send(api, upload_form(user))
    usage = StorageUsage.objects.get(owner=user)

    page = admin_client.post(f"{USAGES}{usage.pk}/delete/", {"post": "yes"})
    admin_client.post(USAGES, {"action": "delete_selected",
                               "_selected_action": [str(usage.pk)], "post": "yes"})

    assert page.status_code == 403
    assert "delete_selected" not in admin_client.get(USAGES).content.decode()
    assert StorageUsage.objects.get(owner=user).used == len(PDF)


def test_an_account_with_storage_usage_is_still_deleted_in_the_admin(admin_client, api, user,
                                                                      store):
    """Its usage row goes with it: the row's own admin refuses a delete on its own pages
    only, not the account's delete that collects it."""
    send(api, upload_form(user))

    response = admin_client.post(f"/admin/accounts/user/{user.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert not User.objects.filter(pk=user.pk).exists()
    assert not StorageUsage.objects.exists()
