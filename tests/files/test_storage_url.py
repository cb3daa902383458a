"""STORAGE_URL (docs/uploads.md, "Storage"): every accepted form, what each builds, and a
clear stop at start for anything else. The other upload tests take their stores from the same
function (tests/files/conftest.py), so a store tested here is a store they exercise."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from django.core.files.storage import storages

from config.env import ConfigError
from config.storage import uploads_storage
from tests.files.helpers import PDF, post, upload, upload_form
from tests.project.test_boot import ENTRY_POINTS, start

DATA = Path("/data")
S3_ENVIRONMENT = {"S3_ENDPOINT_URL": "https://minio.internal:9000",
                  "AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret",
                  "AWS_DEFAULT_REGION": "eu-west-1"}


@pytest.mark.parametrize("url", [None, ""])
def test_unset_is_a_private_folder_in_the_data_folder(url):
    assert uploads_storage(url, DATA) == {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": "/data/uploads", "base_url": "/unused/",
                    "file_permissions_mode": 0o600, "directory_permissions_mode": 0o700}}


def test_a_file_url_is_that_folder_as_private():
    options = uploads_storage("file:///srv/formflow-files", DATA)["OPTIONS"]

    assert options["location"] == "/srv/formflow-files"
    assert (options["file_permissions_mode"], options["directory_permissions_mode"]) == (
        0o600, 0o700)


@pytest.mark.parametrize(("url", "bucket", "prefix"), [
    ("s3://files", "files", ""),
    ("s3://files/", "files", ""),
    ("s3://files/formflow", "files", "formflow"),
    ("s3://files/formflow/", "files", "formflow"),
    ("s3://my.files-1/a/b", "my.files-1", "a/b"),
])
def test_an_s3_url_is_its_bucket_and_prefix_with_the_environments_store(
    monkeypatch, url, bucket, prefix
):
    for name, value in S3_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)

    storage = uploads_storage(url, DATA)

    assert storage["BACKEND"] == "storages.backends.s3.S3Storage"
    options = storage["OPTIONS"]
    assert (options["bucket_name"], options["location"]) == (bucket, prefix)
    assert (options["endpoint_url"], options["access_key"], options["secret_key"],
            options["region_name"]) == tuple(S3_ENVIRONMENT.values())
    assert options["default_acl"] is None and options["querystring_auth"] is False
    assert options["file_overwrite"] is False
    # One PUT streamed from the temporary file, never parts read into memory.
    assert options["transfer_config"].multipart_threshold == 64 * 1024 * 1024
    # A store that stops answering fails a request in about 30 s at most, not minutes.
    client = options["client_config"]
    assert (client.connect_timeout, client.read_timeout) == (3, 10)
    assert client.retries == {"mode": "standard", "total_max_attempts": 2}
    assert options["max_memory_size"] == 256 * 1024  # a download goes to disk past it


def test_an_s3_url_without_the_environment_leaves_boto3_its_own_lookup(monkeypatch):
    for name in S3_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)

    options = uploads_storage("s3://files/p", DATA)["OPTIONS"]

    assert [options[key] for key in ("endpoint_url", "access_key", "secret_key",
                                     "region_name")] == [None] * 4


BAD = [
    "ftp://files/p",             # another scheme
    "s3://",                     # no bucket
    "s3:///prefix",              # no bucket either
    "s3://key:secret@files/p",   # credentials belong in AWS_*, not the URL
    "s3://files:9000/p",         # an endpoint belongs in S3_ENDPOINT_URL
    "s3://files/p?region=eu",    # would be dropped without a word
    "s3://files/p#x",
    "file://srv/files",          # would quietly mean /files
    "file:relative/folder",
    "file://",
    "/srv/files",                # a bare path
    "files/prefix",
    "S3 bucket",
]


@pytest.mark.parametrize("url", BAD)
def test_anything_else_is_refused_naming_the_variable(url):
    with pytest.raises(ConfigError) as refused:
        uploads_storage(url, DATA)

    assert str(refused.value) == (
        f"STORAGE_URL must be s3://bucket/prefix or file:///absolute/folder, not {url!r}")


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_bad_storage_url_stops_every_process_at_start_with_one_line(tmp_path, entry):
    result = start(tmp_path, ENTRY_POINTS[entry], STORAGE_URL="s3://")

    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "FormFlow cannot start: STORAGE_URL must be s3://bucket/prefix or "
        "file:///absolute/folder, not 's3://'"]


@pytest.mark.parametrize("url", [None, "file:///srv/formflow-files"])
def test_a_folder_is_refused_on_more_than_one_machine(url):
    with pytest.raises(ConfigError) as refused:
        uploads_storage(url, DATA, machines=2)

    assert str(refused.value) == (
        "STORAGE_URL must be s3://bucket/prefix with MACHINES=2: a folder on one machine's "
        "disk is not seen by the others")


def test_an_s3_store_serves_any_number_of_machines():
    storage = uploads_storage("s3://files/formflow", DATA, machines=3)

    assert storage["BACKEND"] == "storages.backends.s3.S3Storage"


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_several_machines_on_disk_storage_stop_every_process_with_one_line(tmp_path, entry):
    result = start(tmp_path, ENTRY_POINTS[entry], MACHINES="2")

    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "FormFlow cannot start: STORAGE_URL must be s3://bucket/prefix with MACHINES=2: a "
        "folder on one machine's disk is not seen by the others"]


@pytest.mark.django_db
def test_the_running_store_is_productions(api, user, store):
    """The store an upload goes to is the one production builds: the local folder keeps
    files 0600 in folders 0700, and S3 uploads with production's transfer settings."""
    response = post(api, upload_form(user), {"cv": upload("cv.pdf", PDF)})

    assert response.status_code == 200
    uploads = storages["uploads"]
    if hasattr(store, "root"):
        (key,) = store.keys()
        path = store.root / key
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    else:
        assert uploads.transfer_config.multipart_threshold == 64 * 1024 * 1024
        assert uploads.bucket_name == "formflow-test" and uploads.location == store.prefix
