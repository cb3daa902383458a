import pytest

from tests.conftest import PASSWORD


@pytest.fixture
def owner(client, user):
    """The dashboard's browser client, signed in as the owner."""
    response = client.post("/dashboard/login", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 302
    return client


@pytest.fixture
def team_crew(db):
    """A team with a viewer, an editor, an admin and an owner, and an outsider
    (tests/teams/helpers.py)."""
    from tests.teams.helpers import crew

    return crew()
