"""The Teams page and a team's members page: made, listed, members' roles changed and removed,
leaving, invitations sent and withdrawn, each by the roles the services allow."""

from __future__ import annotations

import pytest
from django.core import mail

from teams.models import Invitation, Membership, Team

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return response.content.decode().replace("<wbr>", "")


def test_the_teams_page_lists_ones_teams_with_the_role(team_crew):
    page = team_crew.browser("editor").get("/dashboard/teams")

    assert page.status_code == 200
    assert f'href="/dashboard/teams/{team_crew.team.pk}">Agency</a>' in text(page)
    assert '<td data-label="Your role">editor</td>' in text(page)


def test_a_new_team_is_made_with_its_maker_as_owner(team_crew):
    browser = team_crew.browser("outsider")

    made = browser.post("/dashboard/teams/new", {"name": "Studio"})

    team = Team.objects.get(name="Studio")
    assert made.status_code == 302 and made["Location"] == f"/dashboard/teams/{team.pk}"
    assert Membership.objects.get(team=team).role == "owner"


def test_an_outsider_gets_404_on_the_members_page(team_crew):
    browser = team_crew.browser("outsider")
    base = f"/dashboard/teams/{team_crew.team.pk}"

    assert browser.get(base).status_code == 404
    assert browser.post(f"{base}/invitations", {"email": "x@example.com",
                                                "role": "viewer"}).status_code == 404


def test_a_viewer_sees_members_but_no_invitations_or_changes(team_crew):
    browser = team_crew.browser("viewer")
    base = f"/dashboard/teams/{team_crew.team.pk}"

    page = text(browser.get(base))
    invited = browser.post(f"{base}/invitations", {"email": "x@example.com", "role": "viewer"})
    removed = browser.post(f"{base}/members/{team_crew.users['editor'].pk}/remove")

    assert "editor@team.example" in page and "Leave the team" in page
    assert "Send invitation" not in page and ">Remove<" not in page and "Change" not in page
    assert invited.status_code == removed.status_code == 403
    assert not Invitation.objects.exists()
    assert Membership.objects.filter(user=team_crew.users["editor"]).exists()


def test_an_admin_invites_and_withdraws(team_crew):
    browser = team_crew.browser("admin")
    base = f"/dashboard/teams/{team_crew.team.pk}"

    sent = browser.post(f"{base}/invitations", {"email": "new@example.com", "role": "editor"})
    page = text(browser.get(base))
    invitation = Invitation.objects.get()
    withdrawn = browser.post(f"{base}/invitations/{invitation.pk}/withdraw")

    assert sent.status_code == 302 and sent["Location"] == base
    assert "Invitation emailed to new@example.com" in page and "new@example.com" in page
    assert any("new@example.com" in message.to for message in mail.outbox)
    assert withdrawn.status_code == 302
    assert not Invitation.objects.exists()


def test_an_admin_cannot_invite_an_owner(team_crew):
    browser = team_crew.browser("admin")
    base = f"/dashboard/teams/{team_crew.team.pk}"

    sent = browser.post(f"{base}/invitations", {"email": "new@example.com", "role": "owner"})

    assert sent.status_code == 302
    assert "Only an owner" in text(browser.get(base))
    assert not Invitation.objects.exists()


def test_an_admin_changes_a_role_and_removes_a_member_but_not_an_owner(team_crew):
    browser = team_crew.browser("admin")
    base = f"/dashboard/teams/{team_crew.team.pk}"
    users = team_crew.users

    page = text(browser.get(base))
    changed = browser.post(f"{base}/members/{users['viewer'].pk}/role", {"role": "editor"})
    removed = browser.post(f"{base}/members/{users['editor'].pk}/remove")
    owner_removed = browser.post(f"{base}/members/{users['owner'].pk}/remove")

    assert f'aria-label="Remove {users["editor"].email}"' in page
    assert f'aria-label="Remove {users["owner"].email}"' not in page
    assert changed.status_code == removed.status_code == 302
    assert Membership.objects.get(user=users["viewer"]).role == "editor"
    assert not Membership.objects.filter(user=users["editor"]).exists()
    assert owner_removed.status_code == 403
    assert Membership.objects.filter(user=users["owner"]).exists()


def test_a_member_leaves(team_crew):
    browser = team_crew.browser("viewer")

    left = browser.post(f"/dashboard/teams/{team_crew.team.pk}/members/"
                        f"{team_crew.users['viewer'].pk}/remove")

    assert left.status_code == 302 and left["Location"] == "/dashboard/teams"
    assert not Membership.objects.filter(user=team_crew.users["viewer"]).exists()


def test_the_last_owner_cannot_leave_and_is_told_why(team_crew):
    browser = team_crew.browser("owner")
    base = f"/dashboard/teams/{team_crew.team.pk}"

    left = browser.post(f"{base}/members/{team_crew.users['owner'].pk}/remove")

    assert left.status_code == 302 and left["Location"] == base
    assert "at least one owner" in text(browser.get(base))
    assert Membership.objects.filter(user=team_crew.users["owner"]).exists()
