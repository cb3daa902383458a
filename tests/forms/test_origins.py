"""allowedOrigins and redirectUrl: the pattern the schema publishes is what the server takes."""

from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forms_app.models import Form
from forms_app.origins import ORIGIN_PATTERN, URL_PATTERN, normalize_origin

FORMS = "/api/v1/forms"


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.from_regex(ORIGIN_PATTERN, fullmatch=True))
def test_every_value_the_pattern_allows_is_an_origin(value):
    assert normalize_origin(value) is not None


# No deadline or speed checks: what is proven is which values pass, however busy the machine.
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
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
    properties = schema["components"]["schemas"]["FormInputRequest"]["properties"]

    assert properties["allowedOrigins"]["items"]["pattern"] == ORIGIN_PATTERN
    # Blank clears it: DRF's schema gives that its own branch.
    assert properties["redirectUrl"]["oneOf"] == [
        {"type": "string", "pattern": URL_PATTERN, "maxLength": 2000},
        {"type": "string", "maxLength": 0},
    ]


def test_a_refused_origin_is_keyed_by_the_list_and_stores_nothing(owner_api):
    response = owner_api.post(
        FORMS, {"name": "Site", "allowedOrigins": ["https://ok.example", "HTTPS://x"]},
        format="json")

    assert response.status_code == 400
    assert list(response.json()["details"]) == ["allowedOrigins"]
    assert not Form.objects.exists()


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.from_regex(URL_PATTERN, fullmatch=True))
def test_every_redirect_the_pattern_allows_is_an_absolute_http_url(value):
    parts = urlsplit(value)

    assert parts.scheme in ("http", "https") and parts.hostname


# No deadline or speed checks: what is proven is which values pass, however busy the machine.
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(url=st.from_regex(URL_PATTERN, fullmatch=True).filter(lambda url: len(url) <= 2000))
def test_the_api_takes_every_redirect_the_schema_allows(owner_api, url):
    response = owner_api.post(FORMS, {"name": "Site", "redirectUrl": url}, format="json")

    assert response.status_code == 201, response.json()
    assert response.json()["redirectUrl"] == url


@pytest.mark.parametrize("url", [
    "https://example.com/thanks page", " https://example.com/", "https://example.com/\n",
    "HTTPS://example.com/", "https://exa mple.com/", "https://user@example.com/",
    "https://example.com:99999/", "javascript:alert(1)", "//example.com/",
])
def test_a_redirect_outside_the_pattern_is_refused(owner_api, url):
    response = owner_api.post(FORMS, {"name": "Site", "redirectUrl": url}, format="json")

    assert response.status_code == 400
    assert list(response.json()["details"]) == ["redirectUrl"]
