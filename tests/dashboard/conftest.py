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


@pytest.fixture
def team_form(team_crew):
    """A form of the crew's team, made by its owner, without the owner's notification."""
    from forms_app.services import form_create

    return form_create(owner=team_crew.users["owner"], name="Agency contact",
                       team=team_crew.team, notify_owner=False)
