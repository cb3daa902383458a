"""A client generated from the OpenAPI schema installs and works against the real server.

openapi-python-client writes a package from /api/schema/, pip installs it into a folder of its
own, and it lists the owner's forms from a live server. A schema that validates but cannot be
turned into a working client (wrong security scheme, a response shape that does not match)
fails here.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import bearer

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


def test_a_generated_client_lists_the_owners_forms(installed_client, live_server, user, form):
    sys.path.insert(0, str(installed_client))
    try:
        client_module = importlib.import_module("formflow_client")
        forms_list = importlib.import_module("formflow_client.api.forms.forms_list")
        client = client_module.AuthenticatedClient(
            base_url=live_server.url, token=bearer(user).split()[1])
        with client:
            answer = forms_list.sync_detailed(client=client)
    finally:
        sys.path.remove(str(installed_client))

    assert answer.status_code == 200
    assert [(listed.field_id, listed.name) for listed in answer.parsed] == [
        (str(form.pk), form.name)]
