"""One version, said the same in three places (contract, "Operations")."""

import re
from pathlib import Path

import formflow

CHANGELOG = Path(__file__).resolve().parents[2] / "CHANGELOG.md"


def newest_changelog_version() -> str:
    match = re.search(r"^## \[(\d+\.\d+\.\d+)\]", CHANGELOG.read_text(), re.MULTILINE)
    assert match, "CHANGELOG.md has no '## [x.y.z]' entry"
    return match.group(1)


def test_readyz_the_openapi_document_and_the_changelog_agree(client, db):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    ready = client.get("/readyz").json()

    assert re.fullmatch(r"\d+\.\d+\.\d+", formflow.__version__)
    assert ready["version"] == schema["info"]["version"] == formflow.version()
    assert ready["version"].partition("+")[0] == formflow.__version__
    assert newest_changelog_version() == formflow.__version__
