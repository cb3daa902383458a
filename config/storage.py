"""Where uploaded files go: the ``uploads`` storage from ``STORAGE_URL`` (contract, "File
uploads"; docs/uploads.md, "Storage"). The settings and the tests that run against a real
S3-compatible server both take it from here, so what is tested is what runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from config import env

FORMS = "s3://bucket/prefix or file:///absolute/folder"
FOLDER = "django.core.files.storage.FileSystemStorage"


def uploads_storage(url: str | None, data_dir: Path, machines: int = 1) -> dict[str, Any]:
    """The STORAGES entry for ``url``; ``env.ConfigError`` (one line at start) for anything
    but the forms docs/uploads.md lists, and for a folder when ``machines`` (MACHINES) says
    the installation runs on more than one machine."""
    storage = _storage(url, data_dir)
    if machines > 1 and storage["BACKEND"] == FOLDER:
        # A file written to one machine's disk is a 404 on every other machine.
        raise env.ConfigError(
            f"STORAGE_URL must be s3://bucket/prefix with MACHINES={machines}: a folder on "
            f"one machine's disk is not seen by the others")
    return storage


def _storage(url: str | None, data_dir: Path) -> dict[str, Any]:
    if not url:
        return _folder(data_dir / "uploads")
    parts = urlsplit(url)
    # A query or fragment would be dropped without a word, and file://name/x would quietly
    # mean /x: refused, so what the operator wrote is what is used.
    if parts.query or parts.fragment or "\\" in url:
        raise _refused(url)
    if parts.scheme == "file" and not parts.netloc and parts.path.startswith("/"):
        return _folder(Path(parts.path))
    if parts.scheme == "s3" and parts.netloc and "@" not in parts.netloc and (
            ":" not in parts.netloc):
        return _s3(parts.netloc, parts.path.strip("/"))
    raise _refused(url)


def _refused(url: str) -> env.ConfigError:
    return env.ConfigError(f"STORAGE_URL must be {FORMS}, not {url!r}")


def _folder(location: Path) -> dict[str, Any]:
    # Files only the service's user can read: they are what visitors sent, not assets.
    return {"BACKEND": FOLDER,
            "OPTIONS": {"location": str(location), "base_url": "/unused/",
                        "file_permissions_mode": 0o600, "directory_permissions_mode": 0o700}}


def _s3(bucket: str, prefix: str) -> dict[str, Any]:
    from boto3.s3.transfer import TransferConfig

    return {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {
        "bucket_name": bucket,
        "location": prefix,
        "endpoint_url": env.optional("S3_ENDPOINT_URL"),
        "access_key": env.optional("AWS_ACCESS_KEY_ID"),
        "secret_key": env.optional("AWS_SECRET_ACCESS_KEY"),
        "region_name": env.optional("AWS_DEFAULT_REGION"),
        "default_acl": None,  # the bucket's own (private) policy: files are never public
        "file_overwrite": False,
        "querystring_auth": False,  # links are this service's own signed ones, never S3's
        "transfer_config": _s3_transfer(TransferConfig),
        "client_config": _s3_client(),
        # A download fetches the object into a temporary file; past this it goes to disk
        # (the default, 0, kept every download whole in memory).
        "max_memory_size": 256 * 1024,
    }}


def _s3_client():
    """botocore waits 60 s to connect and 60 s for an answer, five times over: a store that
    stopped answering held each upload for minutes. Bounded, an unreachable store is a 503
    (storage_unavailable) within the 30 s every request ends in."""
    from botocore.config import Config  # type: ignore[import-untyped]

    return Config(connect_timeout=3, read_timeout=10,
                  retries={"mode": "standard", "total_max_attempts": 2})


def _s3_transfer(transfer_config):
    """boto3 uploads a file past its multipart threshold (8 MiB) in parts it reads into
    memory first: a 20 MB upload was held whole. A file here is at most 25 MiB, under S3's
    5 GB for one PUT, so each goes in one PUT, streamed from its temporary file: a web
    process's memory stays flat however large the files (docs/uploads.md)."""
    return transfer_config(multipart_threshold=64 * 1024 * 1024)
