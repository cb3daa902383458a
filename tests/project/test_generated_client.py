"""A client generated from the OpenAPI schema installs and works against the real server.

openapi-python-client writes a package from /api/schema/, pip installs it into a folder of its
own, and it lists the owner's forms and subscribes to a form's events (as Zapier, Make and n8n
do) from a live server. A schema that validates but cannot be turned into a working client
(wrong security scheme, a response shape that does not match) fails here.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CommitClient, bearer
from tests.files.helpers import PNG, post, upload, upload_form

pytestmark = pytest.mark.django_db(transaction=True)

BIN = Path(sys.executable).parent
CONFIG = "project_name_override: formflow-client\npackage_name_override: formflow_client\n"


@pytest.fixture(scope="module")
def installed_client(tmp_path_factory) -> Path:
    from drf_spectacular.generators import SchemaGenerator

    work = tmp_path_factory.mktemp("client")
    (work / "openapi.json").write_text(json.dumps(SchemaGenerator().get_schema(public=True)))
    (work / "config.yaml").write_text(CONFIG)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(
        [BIN / "openapi-python-client", "generate", "--path", work / "openapi.json",
         "--config", work / "config.yaml", "--meta", "setup", "--output-path", work / "source"],
        check=True, env=env, capture_output=True,
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--target", work / "site", work / "source"],
        check=True, capture_output=True,
    )
    return work / "site"


@contextlib.contextmanager
def generated(installed_client: Path) -> Iterator:
    """The generated package, importable while the block runs."""
    sys.path.insert(0, str(installed_client))
    try:
        yield lambda name: importlib.import_module(f"formflow_client{name}")
    finally:
        sys.path.remove(str(installed_client))


def test_a_generated_client_lists_the_owners_forms(installed_client, live_server, user, form):
    with generated(installed_client) as module:
        forms_list = module(".api.forms.forms_list")
        client = module("").AuthenticatedClient(
            base_url=live_server.url, token=bearer(user).split()[1])
        with client:
            answer = forms_list.sync_detailed(client=client)

    assert answer.status_code == 200
    assert [(listed.field_id, listed.name) for listed in answer.parsed] == [
        (str(form.pk), form.name)]


def test_a_generated_client_subscribes_reads_the_sample_and_unsubscribes(
    installed_client, live_server, user, settings, tmp_path
):
    """With a hooks key, through the generated client only: subscribe, list, read the sample
    (whose submission carries a file, parsed as the schema's StoredFileSchema), unsubscribe."""
    from pullapi.services import api_key_create

    settings.STORAGES = {**settings.STORAGES, "uploads": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "uploads")}}}
    form = upload_form(user)
    stored = post(CommitClient(), form, {"name": "Ada", "cv": upload("cv.png", PNG)})
    assert stored.status_code == 200
    key = api_key_create(owner=user, name="zapier", forms=[str(form.pk)],
                         scopes=["read", "hooks"])[1]

    with generated(installed_client) as module:
        hooks = {name: module(f".api.hooks.{name}") for name in (
            "hooks_create", "hooks_list", "hooks_sample_list", "hooks_destroy")}
        models = module(".models")
        with module("").AuthenticatedClient(base_url=live_server.url, token=key) as client:
            made = hooks["hooks_create"].sync_detailed(client=client, body=models.HookInputRequest(
                url="https://hooks.zapier.example/catch/1", form_id=form.slug,
                events=[models.EventsEnum("submission.created")]))
            listed = hooks["hooks_list"].sync_detailed(client=client)
            sample = hooks["hooks_sample_list"].sync_detailed(client=client, form_id=form.slug)
            gone = hooks["hooks_destroy"].sync_detailed(made.parsed.field_id, client=client)
            after = hooks["hooks_list"].sync_detailed(client=client)
        stored_file = models.StoredFileSchema

    assert made.status_code == 201
    assert made.parsed.signing_secret.startswith("whsec_")
    assert made.parsed.form_id == str(form.pk)
    assert [hook.field_id for hook in listed.parsed] == [made.parsed.field_id]
    assert sample.status_code == 200
    [event] = sample.parsed
    assert event.type_ == "submission.created"
    assert event.data.id == stored.json()["id"]
    assert event.data.fields.additional_properties["name"] == "Ada"
    [sent] = event.data.files
    assert isinstance(sent, stored_file)
    assert (sent.field, sent.name, sent.size, sent.content_type, sent.sha256) == (
        "cv", "cv.png", len(PNG), "image/png", hashlib.sha256(PNG).hexdigest())
    assert event.data.additional_properties == {}
    assert gone.status_code == 204
    assert after.parsed == []
