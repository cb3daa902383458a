"""One version, said the same everywhere the contract lists (contract, "Operations"): /readyz,
/status, the OpenAPI document, formflow_build_info and CHANGELOG.md (whose entry names the
release; the others add the commit, 1.2.0+abc1234)."""

import re
from pathlib import Path

import pytest
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


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A checkout of its own, read by formflow.commit() (no COMMIT file beside it)."""
    git = tmp_path / ".git"
    git.mkdir()
    monkeypatch.setattr(formflow, "ROOT", tmp_path)
    monkeypatch.setattr(formflow, "COMMIT_FILE", tmp_path / "COMMIT")
    formflow.commit.cache_clear()
    yield git
    formflow.commit.cache_clear()


SHA = "89abcdef0123456789abcdef0123456789abcdef"


def test_the_commit_of_a_branch_is_read_loose_or_packed(checkout):
    (checkout / "HEAD").write_text("ref: refs/heads/main\n")
    (checkout / "packed-refs").write_text(f"# pack-refs with: peeled\n{SHA} refs/heads/main\n")
    assert formflow.commit() == "89abcde"

    formflow.commit.cache_clear()
    (checkout / "refs" / "heads").mkdir(parents=True)
    (checkout / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    assert formflow.commit() == "0000000"


def test_a_detached_head_names_its_commit(checkout):
    (checkout / "HEAD").write_text(SHA + "\n")

    assert formflow.version() == f"{formflow.__version__}+89abcde"


def test_a_broken_checkout_gives_the_release_alone(checkout):
    (checkout / "HEAD").write_text("ref: refs/heads/gone\n")

    assert formflow.version() == formflow.__version__
