"""Invitations by a one-time emailed link: wrong address, reuse, expiry, withdrawal, and
sign-up by invitation when REGISTRATION is invite."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from accounts.models import User
from teams.models import Invitation, Membership
from tests.conftest import PASSWORD, make_user
from tests.teams.helpers import client_of

pytestmark = pytest.mark.django_db

ACCEPT = "/api/v1/invitations/accept"


def invite(crew, email="new@example.com", role="editor", who="admin"):
    return crew.api(who).post(f"/api/v1/teams/{crew.team.pk}/invitations",
                              {"email": email, "role": role}, format="json")


def mailed_token(address: str) -> str:
    for message in reversed(mail.outbox):
        if address in message.to:
            return re.search(r"/dashboard/invitations/(\S+)", message.body).group(1)
    raise AssertionError(f"no invitation was mailed to {address}")


def test_an_invitation_is_mailed_once_and_stored_hashed(team_crew):
    response = invite(team_crew, "New@Example.com")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"_id", "email", "role", "createdAt", "expiresAt"}
    assert (body["email"], body["role"]) == ("new@example.com", "editor")
    token = mailed_token("new@example.com")
    assert len(token) >= 43  # 256 bits, base64url
    stored = Invitation.objects.get()
    assert token not in (stored.token_hash, str(stored.pk))
    assert "http://localhost:8000/dashboard/invitations/" in mail.outbox[-1].body


def test_the_invited_address_joins_with_the_role(team_crew):
    invite(team_crew)
    joiner = make_user("new@example.com")
    response = client_of(joiner).post(ACCEPT, {"token": mailed_token("new@example.com")},
                                      format="json")
    assert response.status_code == 200
    assert (response.json()["_id"], response.json()["role"]) == (str(team_crew.team.pk),
                                                                 "editor")
    assert Membership.objects.get(user=joiner).role == "editor"


def test_another_address_is_403_and_leaves_the_invitation_usable(team_crew):
    invite(team_crew)
    token = mailed_token("new@example.com")
    response = team_crew.api("outsider").post(ACCEPT, {"token": token}, format="json")
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"
    joiner = make_user("new@example.com")
    assert client_of(joiner).post(ACCEPT, {"token": token}, format="json").status_code == 200


def test_an_unverified_account_is_403(team_crew):
    invite(team_crew)
    joiner = make_user("new@example.com", verified=False)
    response = client_of(joiner).post(ACCEPT, {"token": mailed_token("new@example.com")},
                                      format="json")
    assert response.status_code == 403
    assert not Membership.objects.filter(user=joiner).exists()


def test_a_used_invitation_is_refused(team_crew):
    invite(team_crew)
    token = mailed_token("new@example.com")
    joiner = client_of(make_user("new@example.com"))
    assert joiner.post(ACCEPT, {"token": token}, format="json").status_code == 200
    again = joiner.post(ACCEPT, {"token": token}, format="json")
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_invitation"


def test_an_expired_invitation_is_refused(team_crew, clock):
    invite(team_crew)
    clock.advance(days=7, seconds=1)
    joiner = client_of(make_user("new@example.com"))
    response = joiner.post(ACCEPT, {"token": mailed_token("new@example.com")}, format="json")
    assert response.status_code == 400
    assert not Membership.objects.filter(user__email="new@example.com").exists()


def test_a_withdrawn_invitation_is_refused(team_crew):
    invitation_id = invite(team_crew).json()["_id"]
    path = f"/api/v1/teams/{team_crew.team.pk}/invitations/{invitation_id}"
    assert team_crew.api("editor").delete(path).status_code == 403
    assert team_crew.api("admin").delete(path).status_code == 204
    joiner = client_of(make_user("new@example.com"))
    response = joiner.post(ACCEPT, {"token": mailed_token("new@example.com")}, format="json")
    assert response.status_code == 400


def test_an_unknown_token_is_refused(owner_api):
    assert owner_api.post(ACCEPT, {"token": "x" * 43}, format="json").status_code == 400


@pytest.mark.parametrize("who,role,status", [
    ("viewer", "viewer", 403), ("editor", "viewer", 403), ("admin", "admin", 201),
    ("admin", "owner", 403), ("owner", "owner", 201)])
def test_who_may_invite_whom(team_crew, who, role, status):
    assert invite(team_crew, role=role, who=who).status_code == status


def test_open_invitations_are_listed_to_admins(team_crew):
    invite(team_crew)
    path = f"/api/v1/teams/{team_crew.team.pk}/invitations"
    assert team_crew.api("editor").get(path).status_code == 403
    listed = team_crew.api("admin").get(path).json()
    assert [invitation["email"] for invitation in listed] == ["new@example.com"]


def test_a_team_invitation_lets_its_address_sign_up_when_registration_is_invite(
        team_crew, api, settings):
    settings.REGISTRATION = "invite"
    invite(team_crew)
    refused = api.post("/api/auth/signup", {"email": "stranger@example.com",
                                             "password": PASSWORD}, format="json")
    assert refused.status_code == 403
    response = api.post("/api/auth/signup", {"email": "new@example.com", "password": PASSWORD},
                        format="json")
    assert response.status_code == 201
    assert User.objects.filter(email="new@example.com").exists()
