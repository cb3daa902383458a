"""A team with one member of each role, and clients signed in as each."""

from __future__ import annotations

from dataclasses import dataclass

from accounts.models import User
from teams.models import Membership, Team
from teams.roles import Role
from teams.services import team_create
from tests.conftest import PASSWORD, CommitBrowserClient, CommitClient, bearer, make_user

ROLES = ("viewer", "editor", "admin", "owner")


def client_of(user: User) -> CommitClient:
    client = CommitClient()
    client.credentials(HTTP_AUTHORIZATION=bearer(user))
    return client


@dataclass
class Crew:
    team: Team
    users: dict[str, User]  # by role, and "outsider"

    def api(self, who: str) -> CommitClient:
        return client_of(self.users[who])

    def browser(self, who: str) -> CommitBrowserClient:
        """A dashboard browser signed in as ``who``."""
        browser = CommitBrowserClient()
        response = browser.post("/dashboard/login",
                                {"email": self.users[who].email, "password": PASSWORD})
        assert response.status_code == 302
        return browser


def crew(prefix: str = "") -> Crew:
    """The owner made the team; a viewer, an editor and an admin joined it."""
    owner = make_user(f"{prefix}owner@team.example")
    team = team_create(owner=owner, name="Agency")
    users = {"owner": owner}
    for role in ("viewer", "editor", "admin"):
        users[role] = make_user(f"{prefix}{role}@team.example")
        Membership.objects.create(team=team, user=users[role], role=Role(role))
    users["outsider"] = make_user(f"{prefix}outsider@team.example")
    return Crew(team, users)
