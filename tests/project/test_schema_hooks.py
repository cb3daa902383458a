"""scripts/schema_hooks.py leaves out exactly the field rules JSON Schema cannot check, and
the server refuses each of them."""

import importlib.util
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "scripts" / "schema_hooks.py"


@pytest.fixture(scope="module")
def hooks():
    spec = importlib.util.spec_from_file_location("schema_hooks", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHECKABLE = [
    [{"name": "a", "type": "text"}, {"name": "b", "type": "text"}],
    [{"name": "n", "type": "number", "min": 1, "max": 1}],
    [{"name": "d", "type": "date", "min": "2026-01-01", "max": "2026-12-31"}],
]
NOT_CHECKABLE = [
    [{"name": "a", "type": "text"}, {"name": "a", "type": "email"}],
    [{"name": "n", "type": "number", "min": 2, "max": 1}],
    [{"name": "d", "type": "date", "min": "2026-12-31", "max": "2026-01-01"}],
]


@pytest.mark.parametrize("rules", CHECKABLE)
def test_rules_the_schema_can_check_are_kept(hooks, owner_api, rules):
    assert hooks.rules_checkable(rules)
    assert owner_api.post("/api/v1/forms", {"name": "R", "fields": rules},
                          format="json").status_code == 201


@pytest.mark.parametrize("rules", NOT_CHECKABLE)
def test_rules_only_words_can_say_are_left_out_and_refused(hooks, owner_api, rules):
    assert not hooks.rules_checkable(rules)
    assert owner_api.post("/api/v1/forms", {"name": "R", "fields": rules},
                          format="json").status_code == 400
