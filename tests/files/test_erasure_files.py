"""Files follow their submission into an erasure by address (contract, "File uploads")."""

from __future__ import annotations

import pytest

from files.models import StorageUsage, StoredFile
from tests.files.helpers import PDF, post, upload, upload_form

pytestmark = pytest.mark.django_db


def test_an_erasure_deletes_the_files_and_gives_the_quota_back(api, owner_api, user, store):
    form = upload_form(user)
    post(api, form, {"email": "ada@example.com", "cv": upload("cv.pdf", PDF, "application/pdf")})
    post(api, form, {"email": "bob@example.com", "cv": upload("b.pdf", PDF, "application/pdf")})
    assert len(store.keys()) == 2

    response = owner_api.post("/api/v1/erasures", {"email": "ada@example.com"}, format="json")

    assert response.json()["submissions"] == 1
    assert len(store.keys()) == 1
    assert StoredFile.objects.get().name == "b.pdf"
    assert StorageUsage.objects.get(owner=user).used == len(PDF)
