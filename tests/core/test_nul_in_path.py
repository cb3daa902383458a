"""A NUL in a path names nothing: 404 in the contract's shape on SQLite and PostgreSQL alike
(PostgreSQL refuses U+0000 in a query parameter, which was a 500)."""

import pytest

from tests.core.test_errors_and_docs import assert_error_shape


@pytest.mark.parametrize("method", ["post", "options"])
def test_public_endpoint_with_nul_in_the_slug(public, form, method):
    response = getattr(public, method)("/api/v1/f/a%00b", {"a": 1}, format="json")
    unknown = getattr(public, method)("/api/v1/f/no-such-form", {"a": 1}, format="json")

    # Exactly what any unknown slug gets: a 404 to a post, the usual answer to a preflight.
    assert response.status_code == unknown.status_code
    assert response.content == unknown.content


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/forms/a%00b",
        "/api/v1/forms/a%00b/submissions",
        "/api/v1/forms/a%00b/export?format=csv",
        "/api/v1/integrations/a%00b",
    ],
)
def test_dashboard_api_with_nul_in_an_identifier(owner_api, path):
    assert_error_shape(owner_api.get(path), 404, "not_found")


def test_dashboard_page_with_nul_in_an_identifier(client, user):
    from tests.conftest import PASSWORD

    client.post("/dashboard/login", {"email": user.email, "password": PASSWORD})

    response = client.get("/dashboard/forms/a%00b")

    assert response.status_code == 404
    assert "Traceback" not in response.content.decode()


def test_pull_api_with_nul_in_the_form_id(puller):
    response = puller.get("/api/v1/submissions?formId=a%00b")

    assert response.status_code in (400, 404)
    assert response.json()["error"]
