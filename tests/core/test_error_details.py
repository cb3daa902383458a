"""Validation details are keyed by the name the client sent (contract, "Conventions")."""


FORMS = "/api/v1/forms"
INTEGRATIONS = "/api/v1/integrations"


def test_a_bad_list_element_is_keyed_by_the_lists_name(owner_api):
    response = owner_api.post(
        FORMS, {"name": "Site", "allowedOrigins": ["https://ok.example", 7]}, format="json")

    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert list(response.json()["details"]) == ["allowedOrigins"]


def test_an_objects_field_is_dotted(owner_api):
    response = owner_api.post(
        INTEGRATIONS, {"type": "WEBHOOK", "config": {"url": "not a url"}}, format="json")

    assert response.status_code == 400
    assert "config.url" in response.json()["details"]


def test_an_unknown_integration_type_is_keyed_type(owner_api):
    response = owner_api.post(
        INTEGRATIONS, {"type": "CARRIER_PIGEON", "config": {}}, format="json")

    assert response.status_code == 400
    assert list(response.json()["details"]) == ["type"]


def test_a_list_of_objects_is_keyed_by_the_lists_name():
    from core.errors import flatten_details

    detail = {"rows": [{}, {"name": ["Required."]}], "tags": {0: ["Bad."], 3: ["Worse."]}}

    assert flatten_details(detail) == {"rows": "Required.", "tags": "Bad."}
