"""The upload tests run twice: on the local folder, and on a real S3-compatible server
(moto's server mode, on loopback) through django-storages, as an operator's STORAGE_URL would."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from config.storage import uploads_storage
from tests.dashboard.conftest import owner  # noqa: F401  # the signed-in dashboard client
from tests.serving.conftest import edge  # noqa: F401  # the production web server

MOTO_PORTS = range(18790, 18800)
BUCKET = "formflow-test"
CREDENTIALS = {"aws_access_key_id": "test", "aws_secret_access_key": "test",
               "region_name": "us-east-1"}


def _free_port() -> int:
    """The first free port of the range set aside for the S3 server."""
    for port in MOTO_PORTS:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port for the S3 server")


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


class LocalStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def setting(self) -> dict:
        """Production's storage for ``STORAGE_URL=file://<root>``."""
        return uploads_storage(f"file://{self.root}", self.root.parent)

    def keys(self) -> list[str]:
        return sorted(str(path.relative_to(self.root)) for path in self.root.rglob("*")
                      if path.is_file())


class S3Store:
    def __init__(self, endpoint: str, prefix: str) -> None:
        import boto3

        self.endpoint, self.prefix = endpoint, prefix
        self.client = boto3.client("s3", endpoint_url=endpoint, **CREDENTIALS)
        with contextlib.suppress(self.client.exceptions.BucketAlreadyOwnedByYou):
            self.client.create_bucket(Bucket=BUCKET)

    def environment(self) -> dict[str, str]:
        """What an operator sets for this store."""
        return {"STORAGE_URL": f"s3://{BUCKET}/{self.prefix}", "S3_ENDPOINT_URL": self.endpoint,
                "AWS_ACCESS_KEY_ID": CREDENTIALS["aws_access_key_id"],
                "AWS_SECRET_ACCESS_KEY": CREDENTIALS["aws_secret_access_key"],
                "AWS_DEFAULT_REGION": CREDENTIALS["region_name"]}

    def setting(self) -> dict:
        """Production's storage for the environment above (read when it is built)."""
        with pytest.MonkeyPatch.context() as patch:
            for name, value in self.environment().items():
                patch.setenv(name, value)
            return uploads_storage(self.environment()["STORAGE_URL"], Path("/unused"))

    def keys(self) -> list[str]:
        found = self.client.list_objects_v2(Bucket=BUCKET, Prefix=self.prefix + "/")
        return sorted(item["Key"][len(self.prefix) + 1:] for item in found.get("Contents", []))


@pytest.fixture(params=["local", "s3"])
def store(request, settings, tmp_path):
    """Where uploads go for this test; ``store.keys()`` lists what is there."""
    if request.param == "local":
        chosen: LocalStore | S3Store = LocalStore(tmp_path / "uploads")
    else:
        endpoint = request.getfixturevalue("moto_endpoint")
        chosen = S3Store(endpoint, f"t{os.getpid()}-{os.urandom(4).hex()}")
    settings.STORAGES = {**settings.STORAGES, "uploads": chosen.setting()}
    return chosen
