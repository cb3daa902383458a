"""The schema's bounds on text are the ones the server enforces, whitespace included."""

import re

import pytest

from core.api.schema import NOT_BLANK

FORMS = "/api/v1/forms"
BLANKS = [" ", "\t\n", "\u3000", "\x1c", "\u00a0 \u2028"]


@pytest.fixture
def schema(api):
    return api.get("/api/schema/", HTTP_ACCEPT="application/json").json()


def query_parameter(schema, path, name):
    parameters = schema["paths"][path]["get"]["parameters"]
    return next(p for p in parameters if p["name"] == name)["schema"]


@pytest.mark.parametrize("value", BLANKS)
def test_blank_text_the_schema_refuses_is_refused(owner_api, schema, value):
    name = schema["components"]["schemas"]["FormInputRequest"]["properties"]["name"]

    assert name["pattern"] == NOT_BLANK
    assert not re.fullmatch(NOT_BLANK, value)
    assert owner_api.post(FORMS, {"name": value}, format="json").status_code == 400


@pytest.mark.parametrize("value", ["\ufeff", " a ", "a"])
def test_text_the_schema_allows_is_taken(owner_api, value):
    assert re.fullmatch(NOT_BLANK, value)
    assert owner_api.post(FORMS, {"name": value}, format="json").status_code == 201


def test_length_is_measured_as_sent_not_after_trimming(owner_api):
    padded = " " * 5 + "x" * 200  # 200 after trimming, 205 as sent; maxLength is 200

    response = owner_api.post(FORMS, {"name": padded}, format="json")

    assert response.status_code == 400
    assert "name" in response.json()["details"]


def test_a_pull_parameter_of_spaces_is_refused_as_the_schema_says(schema, puller):
    form_id = query_parameter(schema, "/api/v1/submissions", "formId")

    assert form_id["pattern"] == NOT_BLANK
    response = puller.get("/api/v1/submissions", {"formId": "   "})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_parameter"


@pytest.mark.parametrize("value, taken", [("application/pdf", True), ("image/*", True),
                                          ("00", False), ("image/", False), ("*/*", False)])
def test_upload_types_the_schema_allows_are_taken(owner_api, schema, value, taken):
    """A list's items keep their pattern in the schema, so a generated client and the server
    agree on each type."""
    uploads = schema["components"]["schemas"]["FileUploadsRequest"]["properties"]["types"]
    body = {"name": "Files", "fileUploads": {"maxBytes": 1000, "maxFiles": 1, "types": [value]}}

    assert bool(re.fullmatch(uploads["items"]["pattern"], value)) is taken
    assert (owner_api.post(FORMS, body, format="json").status_code == 201) is taken


RULES = [
    ({"name": "age", "type": "number", "min": 0, "max": 120}, True),
    ({"name": "day", "type": "date", "min": "2026-01-01", "required": True}, True),
    ({"name": "size", "type": "select", "options": ["S", "M"]}, True),
    ({"name": "note", "type": "text", "maxLength": 10}, True),
    ({"name": "ok", "type": "checkbox"}, True),
    # What schemathesis sent, valid by the schema before each type had its own keys.
    ({"name": "0", "type": "tel", "min": 0.0, "max": 0.0, "options": ["0"]}, False),
    ({"name": "b", "type": "checkbox", "maxLength": 3}, False),
    ({"name": "c", "type": "file", "options": ["x"]}, False),
    ({"name": "d", "type": "date", "min": 3}, False),
    ({"name": "n", "type": "number", "min": "2026-01-01"}, False),
    ({"name": "s", "type": "select"}, False),
    ({"name": "s", "type": "select", "options": [" "]}, False),
    ({"name": " ", "type": "text"}, False),
]


@pytest.mark.parametrize("rule, taken", RULES)
def test_a_field_rule_the_schema_allows_is_taken_and_no_other(owner_api, schema, rule, taken):
    import jsonschema

    rules = schema["components"]["schemas"]["FormInputRequest"]["properties"]["fields"]
    validator = jsonschema.Draft4Validator(rules["items"],
                                           format_checker=jsonschema.FormatChecker())

    assert validator.is_valid(rule) is taken
    response = owner_api.post(FORMS, {"name": "Rules", "fields": [rule]}, format="json")
    assert response.status_code == (201 if taken else 400)


@pytest.mark.parametrize("path, method", [("/api/v1/forms", "post"),
                                          ("/api/v1/forms/{id}", "patch")])
def test_a_taken_slug_is_in_the_schema(schema, path, method):
    assert "409" in schema["paths"][path][method]["responses"]
