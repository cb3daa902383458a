"""Upload refusals in Formspree's codes (contract, "Drop-in"), so its clients tell the visitor
what happened: a file over maxBytes is FILES_TOO_BIG, more than maxFiles TOO_MANY_FILES."""

from __future__ import annotations

import pytest

from tests.files.conftest import LocalStore
from tests.files.helpers import PNG, post, upload, upload_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def form(user, settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "uploads": LocalStore(tmp_path / "up").setting()}
    return upload_form(user)


def test_a_file_over_max_bytes_is_files_too_big_on_its_field(api, form):
    response = post(api, form, {"name": "Ada", "cv": upload("big.png", PNG + b"x" * 1000)})

    assert response.status_code == 413
    assert response.json()["errors"] == [
        {"code": "FILES_TOO_BIG", "message": "A file may be at most 1000 bytes."},
        {"code": "FILES_TOO_BIG", "field": "cv", "message": "Cv is larger than 1000 bytes."},
    ]


def test_too_many_files_is_too_many_files(api, form):
    files = {"a": upload("a.png", PNG), "b": upload("b.png", PNG), "c": upload("c.png", PNG)}

    response = post(api, form, files)

    assert response.status_code == 413
    assert response.json()["errors"][0] == {
        "code": "TOO_MANY_FILES", "message": "A submission may have at most 2 files."}
    assert [entry.get("field") for entry in response.json()["errors"]] == [None, "c"]
