"""schemathesis.toml leaves out exactly the operations it names, and no check elsewhere."""

import json
from pathlib import Path

import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDERS = ("TOKEN", "API_KEY", "SLUG", "FORM", "SUBMISSION", "DELIVERY")


@pytest.fixture
def loaded(api, tmp_path, monkeypatch):
    for name in PLACEHOLDERS:
        monkeypatch.setenv(f"FORMFLOW_{name}", "x")
    document = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(document))
    config = SchemathesisConfig.from_path(str(ROOT / "schemathesis.toml"))
    schema = schemathesis.openapi.from_path(str(path), config=config)
    every = {f"{method.upper()} {route}" for route, methods in document["paths"].items()
             for method in methods}
    return schema, every


def test_only_the_named_operations_are_left_out(loaded):
    schema, every = loaded
    selected = {result.ok().label for result in schema.get_all_operations()}

    assert every - selected == {
        "POST /api/auth/logout-all",
        "POST /api/auth/change-password",
        "DELETE /api/v1/api-keys/{id}",
    }


def test_checks_are_off_only_where_named(loaded):
    schema, _ = loaded
    off = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        checks = schema.config.checks_config_for(operation=operation, phase=None)
        names = [name for name in ("positive_data_acceptance", "negative_data_rejection")
                 if not getattr(checks, name).enabled]
        if names:
            off[operation.label] = names

    assert off == {
        "POST /api/auth/verify-email": ["positive_data_acceptance"],
        "POST /api/auth/reset-password": ["positive_data_acceptance"],
        "POST /api/auth/2fa/enable": ["positive_data_acceptance"],
        "POST /api/auth/2fa/disable": ["positive_data_acceptance"],
        "GET /api/v1/submissions": ["positive_data_acceptance"],
        "GET /api/v1/audit": ["positive_data_acceptance"],
        "POST /api/v1/api-keys": ["positive_data_acceptance"],
        "POST /api/v1/integrations": ["positive_data_acceptance"],
        "PATCH /api/v1/integrations/{id}": ["positive_data_acceptance"],
        "POST /api/v1/hooks": ["positive_data_acceptance"],
        "POST /api/v1/erasures": ["positive_data_acceptance"],
        "GET /api/v1/erasures/preview": ["positive_data_acceptance"],
        "POST /api/v1/teams/{team_id}/invitations": ["positive_data_acceptance"],
        "POST /api/v1/invitations/accept": ["positive_data_acceptance"],
        "PATCH /api/v1/teams/{team_id}": ["positive_data_acceptance"],
        "POST /api/v1/f/{slug}": ["positive_data_acceptance", "negative_data_rejection"],
        "POST /f/{slug}": ["positive_data_acceptance", "negative_data_rejection"],
        "GET /api/v1/teams/{team_id}/audit": ["positive_data_acceptance"],
    }
