"""Two owners, each demoting or removing the other (or each leaving) at the same moment: one
wins, the other is refused, and the team always keeps an owner. Real requests in two threads,
each on its own database connection.

teams/services.py holds the team's row before it reads anything, the caller's own role
included, so the two run one after the other and the second is judged on the team as the
first left it: a caller just demoted may no longer manage owners (403), one just removed is
outside the team (404), and the last owner cannot leave (409 last_owner). Whichever thread
wins, the loser's answer is the same."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from accounts.models import User
from teams.models import Membership, Team
from teams.roles import Role
from teams.services import team_create
from tests.conftest import make_user
from tests.teams.helpers import client_of

ROUNDS = 5  # each round a new team: a lost race must not hide behind a lucky schedule

# The winner's status, then the loser's status and error.
OUTCOMES = {
    "demote": (200, 403, "forbidden"),
    "remove": (204, 404, "not_found"),
    "leave": (204, 409, "last_owner"),
}


def two_owners(round_: int) -> tuple[Team, User, User]:
    first = make_user(f"first{round_}@team.example")
    second = make_user(f"second{round_}@team.example")
    team = team_create(owner=first, name=f"Agency {round_}")
    Membership.objects.create(team=team, user=second, role=Role.OWNER)
    return team, first, second


def request(kind: str, team: Team, actor: User, other: User):
    """``actor``'s half of the race, as the API's client would send it."""
    client = client_of(actor)
    base = f"/api/v1/teams/{team.pk}/members"
    if kind == "demote":
        return client.patch(f"{base}/{other.pk}", {"role": "editor"}, format="json")
    if kind == "remove":
        return client.delete(f"{base}/{other.pk}")
    return client.delete(f"{base}/{actor.pk}")  # leave


def race(kind: str, team: Team, first: User, second: User) -> list:
    """Both requests at once, each in its own thread and connection."""
    start = threading.Barrier(2)

    def one(pair: tuple[User, User]):
        try:
            start.wait()
            return request(kind, team, *pair)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, [(first, second), (second, first)]))


# On PostgreSQL, as the other concurrency tests: SQLite takes one writer at a time, which
# would order the two requests by itself.
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", sorted(OUTCOMES))
def test_two_owners_at_once_leave_the_team_an_owner(kind):
    won, lost, error = OUTCOMES[kind]
    for round_ in range(ROUNDS):
        team, first, second = two_owners(round_)

        answers = race(kind, team, first, second)

        codes = sorted(answer.status_code for answer in answers)
        assert codes == sorted([won, lost]), (round_, [a.content for a in answers])
        refused = next(answer for answer in answers if answer.status_code == lost)
        assert refused.json()["error"] == error
        owners = team.memberships.filter(role=Role.OWNER)
        assert owners.count() == 1
        holder = Team.objects.get(pk=team.pk).account_of_record_id
        assert owners.filter(user_id=holder).exists()
