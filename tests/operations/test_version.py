"""One version, said the same everywhere the contract lists (contract, "Operations"): /readyz,
/status, the OpenAPI document, formflow_build_info and CHANGELOG.md (whose entry names the
release; the others add the commit, 1.2.0+abc1234)."""

import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

import formflow

CHANGELOG = Path(__file__).resolve().parents[2] / "CHANGELOG.md"
TOKEN = "version-token-0123456789"


def newest_changelog_version() -> str:
    match = re.search(r"^## \[(\d+\.\d+\.\d+)\]", CHANGELOG.read_text(), re.MULTILINE)
    assert match, "CHANGELOG.md has no '## [x.y.z]' entry"
    return match.group(1)


def build_info(client) -> dict[str, str]:
    text = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()
    [family] = [f for f in text_string_to_metric_families(text)
                if f.name == "formflow_build_info"]
    [sample] = family.samples
    assert sample.value == 1
    return sample.labels


def test_every_place_and_the_changelog_agree(client, db, settings):
    settings.METRICS_TOKEN = TOKEN
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    ready = client.get("/readyz").json()
    status = client.get("/status", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").json()
    info = build_info(client)

    assert re.fullmatch(r"\d+\.\d+\.\d+", formflow.__version__)
    versions = {ready["version"], status["version"], schema["info"]["version"], info["version"]}
    assert versions == {formflow.version()}
    assert formflow.version().partition("+")[0] == formflow.__version__
    assert newest_changelog_version() == formflow.__version__
    assert info["commit"] == formflow.commit()
