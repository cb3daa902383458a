"""An admin withdraws an invitation at the moment its address accepts it. Real requests, the
acceptance on a database connection of its own, made to land between the withdrawal's read
of the invitation and its delete (the window a busy server leaves open by itself).

Whichever holds the invitation first, the outcome must be one of: the withdrawal is refused
(404: it was used) and the member joined, or the withdrawal stands and no one joined."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from audit.models import Entry
from teams.models import Invitation
from tests.conftest import make_user
from tests.teams.helpers import client_of
from tests.teams.test_invitations import ACCEPT, invite, mailed_token


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_withdrawal_racing_an_acceptance_does_not_report_success_for_a_join(
        team_crew, monkeypatch):
    made = invite(team_crew)
    assert made.status_code == 201
    token = mailed_token("new@example.com")
    joiner = make_user("new@example.com")
    accepted = {}
    threads: list[threading.Thread] = []
    delete = Invitation.delete

    def accept_in_between(self, *args, **kwargs):
        def accept():
            try:
                accepted["answer"] = client_of(joiner).post(ACCEPT, {"token": token},
                                                            format="json")
            finally:
                connection.close()
        other = threading.Thread(target=accept)
        threads.append(other)
        other.start()
        other.join(3)  # held back by a withdrawal that locked the row first
        return delete(self, *args, **kwargs)

    monkeypatch.setattr(Invitation, "delete", accept_in_between)
    withdrawn = team_crew.api("admin").delete(
        f"/api/v1/teams/{team_crew.team.pk}/invitations/{made.json()['_id']}")
    for other in threads:  # an acceptance held back answers once the withdrawal commits
        other.join(10)

    joined = team_crew.team.memberships.filter(user=joiner).exists()
    assert accepted["answer"].status_code in (200, 400)
    if joined:
        assert withdrawn.status_code == 404, (
            "the withdrawal answered 204 and logged member.invitation_withdrawn, "
            "yet the invitee is in the team")
        assert not Entry.objects.filter(action="member.invitation_withdrawn").exists()
    else:
        assert withdrawn.status_code == 204
