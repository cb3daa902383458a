"""An owner demotes another owner at the moment the latter hands the account of record to a
third owner, deletes the team, or invites an owner. Real requests in two threads, each on its
own database connection.

teams/services.py holds the team's row before it reads the caller's role for each of these,
so the demoted owner is judged on the team as the demotion left it: whichever request holds
the row first, the demoted owner either acted as an owner before the demotion or is refused
as the editor they have become (403 forbidden). A team deleted first answers the demotion 404."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from accounts.models import User
from audit.models import Entry
from teams.models import Invitation, Membership, Team
from teams.roles import Role
from teams.services import team_create
from tests.conftest import make_user
from tests.teams.helpers import client_of

ROUNDS = 10  # each round a new team: a lost race must not hide behind a lucky schedule


def three_owners(round_: int) -> tuple[Team, User, User, User]:
    """``first`` made the team and is its account of record."""
    first, second, third = (make_user(f"{name}{round_}@team.example")
                            for name in ("first", "second", "third"))
    team = team_create(owner=first, name=f"Agency {round_}")
    for user in (second, third):
        Membership.objects.create(team=team, user=user, role=Role.OWNER)
    return team, first, second, third


def demote(team: Team, first: User, second: User):
    return client_of(first).patch(f"/api/v1/teams/{team.pk}/members/{second.pk}",
                                  {"role": "editor"}, format="json")


def act(kind: str, team: Team, second: User, third: User):
    """The demoted owner's half of the race, as the API's client would send it."""
    client = client_of(second)
    if kind == "hand_over":
        return client.patch(f"/api/v1/teams/{team.pk}", {"accountOfRecord": str(third.pk)},
                            format="json")
    if kind == "delete":
        return client.delete(f"/api/v1/teams/{team.pk}")
    return client.post(f"/api/v1/teams/{team.pk}/invitations",
                       {"email": "new@team.example", "role": "owner"}, format="json")


def race(kind: str, team: Team, first: User, second: User, third: User) -> tuple:
    """Both requests at once, each in its own thread and connection: (demotion, act)."""
    start = threading.Barrier(2)

    def one(request):
        try:
            start.wait()
            return request()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        demoted = pool.submit(one, lambda: demote(team, first, second))
        acted = pool.submit(one, lambda: act(kind, team, second, third))
        return demoted.result(), acted.result()


def logged(team: Team, action: str):
    """When the team's log recorded ``action``: inside the change, under the team's hold."""
    return Entry.objects.get(team_id=team.pk, action=action).at


def refused_as_editor(answer) -> bool:
    return answer.status_code == 403 and answer.json()["error"] == "forbidden"


def rounds(kind: str):
    for round_ in range(ROUNDS):
        team, first, second, third = three_owners(round_)
        demoted, acted = race(kind, team, first, second, third)
        yield team, first, second, third, demoted, acted


# On PostgreSQL, as the other concurrency tests: SQLite takes one writer at a time, which
# would order the two requests by itself.
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_demoted_owner_cannot_hand_the_account_of_record_on():
    for team, first, second, third, demoted, acted in rounds("hand_over"):
        assert demoted.status_code == 200, demoted.content
        holder = Team.objects.get(pk=team.pk).account_of_record_id
        if acted.status_code == 200:  # held the row first, as an owner
            assert holder == third.pk
            assert logged(team, "team.changed") < logged(team, "member.role_changed")
        else:
            assert refused_as_editor(acted), acted.content
            assert holder == first.pk
        assert team.memberships.get(user=second).role == Role.EDITOR
        assert team.forms.exclude(account_id=holder).count() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_demoted_owner_cannot_delete_the_team():
    for team, _first, second, _third, demoted, acted in rounds("delete"):
        if acted.status_code == 204:  # held the row first, as an owner
            assert demoted.status_code == 404, demoted.content
            assert not Team.objects.filter(pk=team.pk).exists()
        else:
            assert refused_as_editor(acted), acted.content
            assert demoted.status_code == 200, demoted.content
            assert team.memberships.get(user=second).role == Role.EDITOR


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_demoted_owner_leaves_no_owner_invitation():
    for team, _first, second, _third, demoted, acted in rounds("invite"):
        assert demoted.status_code == 200, demoted.content
        # Sent first, as an owner: the demotion withdrew it with the power that sent it.
        assert acted.status_code == 201 or refused_as_editor(acted), acted.content
        assert not Invitation.objects.filter(team=team, invited_by=second).exists()
        assert team.memberships.get(user=second).role == Role.EDITOR
