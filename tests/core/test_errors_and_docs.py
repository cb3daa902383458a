import pytest

from tests.conftest import PASSWORD


def assert_error_shape(response, status, code):
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["error"] == code
    assert isinstance(body["message"], str) and body["message"]
    assert "Traceback" not in response.content.decode()


def test_unknown_api_path_is_json_404(api):
    assert_error_shape(api.get("/api/v1/nothing-here"), 404, "not_found")


def test_unknown_api_path_is_json_404_in_debug(api, settings):
    settings.DEBUG = True
    assert_error_shape(api.get("/api/nothing-here"), 404, "not_found")


def test_wrong_method_is_json_405(api):
    response = api.get("/api/auth/login")

    assert_error_shape(response, 405, "method_not_allowed")


@pytest.mark.parametrize("path", ["/api/crash/plain", "/api/crash/drf"])
@pytest.mark.parametrize("debug", [False, True])
def test_server_error_is_json_500_without_details(api, settings, path, debug):
    settings.ROOT_URLCONF = "tests.core.crashing_urls"
    settings.DEBUG = debug
    api.raise_request_exception = False

    response = api.get(path)

    assert_error_shape(response, 500, "server_error")
    assert "secret stack detail" not in response.content.decode()


def test_oversized_body_is_json_413(api):
    body = '{"email": "a@example.com", "password": "' + "x" * (10 * 1024 * 1024) + '"}'

    response = api.post("/api/auth/login", body, content_type="application/json")

    assert_error_shape(response, 413, "payload_too_large")


def test_error_never_echoes_password(api):
    response = api.post("/api/auth/signup", {"email": "bad", "password": PASSWORD}, format="json")

    assert PASSWORD not in response.content.decode()


def test_schema_lists_account_endpoints(api):
    response = api.get("/api/schema/", HTTP_ACCEPT="application/json")

    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in ["/api/auth/signup", "/api/auth/verify-email", "/api/auth/login", "/api/auth/me"]:
        assert path in paths


def test_docs_page_uses_local_assets_only(api):
    response = api.get("/api/docs/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "cdn" not in html.lower()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html


def test_docs_assets_are_served(client):
    response = client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")

    assert response.status_code == 200


def test_health(client, db):
    assert client.get("/healthz").json() == {"status": "ok"}


@pytest.mark.parametrize("path", ["/dashboard/login", "/admin/login/"])
def test_sign_in_pages_carry_a_content_security_policy(client, path):
    policy = client.get(path)["Content-Security-Policy"]

    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["form-action"].startswith("'self'")


def test_the_api_carries_no_page_policy(api):
    assert not api.get("/api/auth/me").has_header("Content-Security-Policy")


def test_schema_lists_the_recovery_endpoints(api):
    paths = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]

    for path in ["forgot-password", "reset-password", "change-password", "logout-all"]:
        assert f"/api/auth/{path}" in paths


def test_schema_offers_bearer_or_cookie_not_both_at_once(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()

    security = schema["paths"]["/api/auth/me"]["get"]["security"]

    assert {"bearerAuth": []} in security
    assert {"cookieAuth": []} in security
    assert all(len(requirement) == 1 for requirement in security)
