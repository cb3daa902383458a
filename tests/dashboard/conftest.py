import pytest

from tests.conftest import PASSWORD


@pytest.fixture
def owner(client, user):
    """The dashboard's browser client, signed in as the owner."""
    response = client.post("/dashboard/login", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 302
    return client
