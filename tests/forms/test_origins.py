"""allowedOrigins: the pattern the schema publishes is exactly what the server accepts."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forms_app.models import Form
from forms_app.origins import ORIGIN_PATTERN, normalize_origin

FORMS = "/api/v1/forms"


@given(st.from_regex(ORIGIN_PATTERN, fullmatch=True))
def test_every_value_the_pattern_allows_is_an_origin(value):
    assert normalize_origin(value) is not None


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(origin=st.from_regex(ORIGIN_PATTERN, fullmatch=True))
def test_the_api_takes_every_origin_the_schema_allows(owner_api, origin):
    response = owner_api.post(FORMS, {"name": "Site", "allowedOrigins": [origin]}, format="json")

    assert response.status_code == 201, response.json()
    assert response.json()["allowedOrigins"] == [normalize_origin(origin)]


def test_ipv6_and_default_ports_are_stored_canonically(owner_api):
    payload = {"name": "Site", "allowedOrigins": [
        "http://[::1]:8080", "https://[2001:DB8::1]:443/", "http://LocalHost:80"]}

    body = owner_api.post(FORMS, payload, format="json").json()

    assert body["allowedOrigins"] == ["http://[::1]:8080", "https://[2001:db8::1]",
                                      "http://localhost"]


def test_the_schema_publishes_the_validators_pattern(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    items = schema["components"]["schemas"]["FormInputRequest"]["properties"]["allowedOrigins"]

    assert items["items"]["pattern"] == ORIGIN_PATTERN


def test_a_refused_origin_names_its_place_and_stores_nothing(owner_api):
    response = owner_api.post(
        FORMS, {"name": "Site", "allowedOrigins": ["https://ok.example", "HTTPS://x"]},
        format="json")

    assert response.status_code == 400
    assert list(response.json()["details"]) == ["allowedOrigins.1"]
    assert not Form.objects.exists()
