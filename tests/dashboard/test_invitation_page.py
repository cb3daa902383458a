"""The page behind a team invitation's mailed link: opening it changes nothing, its button
joins the team; a used, withdrawn, expired or unknown link and another address are refused
in words, and the token never reaches another site or the log."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.test import Client

from core import clock
from teams.models import Invitation, Membership
from teams.services import invitation_create
from tests.conftest import PASSWORD, CommitBrowserClient, last_code, make_user
from tests.teams.helpers import Crew

pytestmark = pytest.mark.django_db

INVITED = "new@example.com"


def invite(crew: Crew, email: str = INVITED, role: str = "editor") -> str:
    """The invitation's link path, with the token the mail would carry."""
    from unittest import mock

    with mock.patch("teams.services.secrets.token_urlsafe", return_value="T" * 43):
        invitation_create(team=crew.team, actor=crew.users["admin"], email=email, role=role)
    return "/dashboard/invitations/" + "T" * 43


def signed_in(email: str) -> Client:
    browser = CommitBrowserClient()
    response = browser.post("/dashboard/login", {"email": email, "password": PASSWORD})
    assert response.status_code == 302
    return browser


def text(response) -> str:
    return response.content.decode()


def test_signed_out_the_link_asks_to_log_in_and_comes_back(team_crew):
    link = invite(team_crew)
    make_user(INVITED)
    browser = CommitBrowserClient()

    response = browser.get(link)

    assert response.status_code == 302
    assert response["Location"] == f"/dashboard/login?next={link.replace('/', '%2F')}"
    back = browser.post("/dashboard/login", {"email": INVITED, "password": PASSWORD,
                                             "next": link})
    assert back["Location"] == link


def test_the_page_names_the_team_and_role_and_joins_nothing_until_pressed(team_crew):
    link = invite(team_crew)
    joiner = make_user(INVITED)

    page = signed_in(INVITED).get(link)

    assert page.status_code == 200
    assert "Agency" in text(page) and "editor" in text(page)
    assert ">Accept</button>" in text(page)
    assert page["Referrer-Policy"] == "same-origin"
    assert not Membership.objects.filter(user=joiner).exists()


def test_accept_joins_the_team_and_goes_to_the_dashboard(team_crew):
    link = invite(team_crew, role="viewer")
    joiner = make_user(INVITED)
    browser = signed_in(INVITED)

    pressed = browser.post(link)

    assert pressed.status_code == 302
    assert pressed["Location"] == "/dashboard/"
    assert Membership.objects.get(user=joiner, team=team_crew.team).role == "viewer"
    assert "You joined the team “Agency” as viewer." in text(browser.get("/dashboard/"))


def test_another_address_is_a_403_page_and_leaves_the_invitation_usable(team_crew):
    link = invite(team_crew)

    page = signed_in("outsider@team.example").get(link)
    pressed = signed_in("outsider@team.example").post(link)

    assert page.status_code == pressed.status_code == 403
    assert "for another address" in text(page)
    assert "Agency" not in text(page)
    assert not Membership.objects.filter(user=team_crew.users["outsider"]).exists()
    assert Invitation.objects.get().accepted_at is None


def test_a_used_link_is_a_400_page(team_crew):
    link = invite(team_crew)
    make_user(INVITED)
    browser = signed_in(INVITED)
    assert browser.post(link).status_code == 302

    again = browser.get(link)
    pressed_again = browser.post(link)

    assert again.status_code == pressed_again.status_code == 400
    assert "no longer works" in text(again)
    assert again["Referrer-Policy"] == "same-origin"


@pytest.mark.parametrize("case", ["expired", "withdrawn", "unknown", "odd"])
def test_an_expired_withdrawn_or_unknown_link_is_a_400_page(team_crew, case):
    link = invite(team_crew)
    make_user(INVITED)
    if case == "expired":
        Invitation.objects.update(expires_at=clock.now() - timedelta(seconds=1))
    elif case == "withdrawn":
        Invitation.objects.all().delete()
    elif case == "unknown":
        link = "/dashboard/invitations/" + "U" * 43
    else:
        link = "/dashboard/invitations/%ff'<x>"

    response = signed_in(INVITED).get(link)

    assert response.status_code == 400
    assert "no longer works" in text(response)


def test_a_refused_press_leaves_no_live_token_in_the_log(team_crew, caplog):
    """A post without the CSRF token is refused, and Django's refusal names the path."""
    link = invite(team_crew)
    make_user(INVITED)
    browser = signed_in(INVITED)
    browser.handler.enforce_csrf_checks = True

    with caplog.at_level(logging.INFO):
        refused = browser.post(link)
        logging.getLogger("django.request").error("Internal Server Error: %s", link)

    assert refused.status_code == 403
    assert "/dashboard/invitations/<token>" in caplog.text
    assert "T" * 43 not in caplog.text
    assert Invitation.objects.get().accepted_at is None


def test_an_invited_address_without_an_account_signs_up_and_comes_back(team_crew, settings):
    """Even where sign-up is by invitation only: the team's invitation is one."""
    settings.REGISTRATION = "invite"
    link = invite(team_crew)
    browser = CommitBrowserClient()
    login = browser.get(browser.get(link)["Location"])
    signup_link = f"/dashboard/signup?next={link.replace('/', '%2F')}"
    assert f'href="{signup_link}"' in text(login)

    signed_up = browser.post("/dashboard/signup", {"email": INVITED, "password": PASSWORD,
                                                   "next": link})
    assert signed_up.status_code == 302
    verify = signed_up["Location"]
    assert "next=%2Fdashboard%2Finvitations%2F" in verify
    assert f'name="next" value="{link}"' in text(browser.get(verify))
    verified = browser.post("/dashboard/verify", {"email": INVITED, "code": last_code(INVITED),
                                                  "next": link})

    assert verified["Location"] == link
    assert browser.post(link)["Location"] == "/dashboard/"
    assert Membership.objects.get(user__email=INVITED).role == "editor"
