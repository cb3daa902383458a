"""An operator's quota for one account (StorageUsage.quota, set in the admin): it lets more
or less through than DEFAULT_STORAGE_QUOTA_BYTES, exactly as the default would."""

from __future__ import annotations

import pytest

from accounts.models import User
from files.models import StorageUsage, StoredFile
from tests.files.helpers import PDF, post, upload, upload_form

pytestmark = pytest.mark.django_db

USAGES = "/admin/files/storageusage/"


@pytest.fixture
def admin_client(client):
    client.force_login(User.objects.create_superuser("admin@example.com", "admin-pass-123"))
    return client


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
