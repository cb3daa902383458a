import pytest

from accounts.models import User
from audit.models import Entry

AUDIT = "/api/v1/audit"


def entries(action: str | None = None) -> list[Entry]:
    """The log, newest first, as the database holds it."""
    rows = Entry.objects.order_by("-at", "-id")
    return list(rows.filter(action=action) if action else rows)


def only(action: str) -> Entry:
    found = entries(action)
    assert len(found) == 1, [entry.action for entry in entries()]
    return found[0]


@pytest.fixture
def logged(owner_api):
    """The caller's log as the API answers it, one page of 100."""
    def read(**query):
        response = owner_api.get(AUDIT, {"limit": 100, **query})
        assert response.status_code == 200, response.content
        return response.json()["data"]
    return read


# The shared fixtures make their rows through the services, which record them: each test here
# starts from an empty log.
@pytest.fixture
def form(form):
    Entry.objects.all().delete()
    return form


@pytest.fixture
def hook(hook):
    Entry.objects.all().delete()
    return hook


@pytest.fixture
def operator(db) -> User:
    return User.objects.create_superuser("admin@example.com", "admin-pass-123")


@pytest.fixture
def admin_client(client, operator):
    """The Django admin, signed in as a superuser."""
    client.force_login(operator)
    return client


@pytest.fixture
def team_crew(db):
    """A team with one member of each role (tests/teams/helpers.py), the log then emptied."""
    from tests.teams.helpers import crew

    made = crew()
    Entry.objects.all().delete()
    return made
