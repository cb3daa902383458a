"""Sign-up by the mailed verification link goes on to the invitation that sent the person to
sign up, as the typed code does; the link's ``next`` is only ever a page of the dashboard, and
the invitation's token it carries crosses the broker sealed."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from django.core import mail

from accounts import mails, tasks
from teams.models import Membership
from tests.conftest import PASSWORD, CommitBrowserClient
from tests.dashboard.test_invitation_page import INVITED, invite

pytestmark = pytest.mark.django_db

TOKEN = "T" * 43  # the invitation's, as invite() makes it


def mailed_link(address: str) -> str:
    """The path and query of the confirm link in the newest mail to ``address``."""
    message = next(m for m in reversed(mail.outbox) if address in m.to)
    link = re.search(r"(https?://\S+/dashboard/confirm/\S+)", message.body).group(1)
    parts = urlsplit(link)
    return f"{parts.path}?{parts.query}" if parts.query else parts.path


def hidden_next(page: str) -> str | None:
    found = re.search(r'<input type="hidden" name="next" value="([^"]*)">', page)
    return found.group(1) if found else None


def sign_up(browser, next_url: str) -> str:
    response = browser.post("/dashboard/signup", {"email": INVITED, "password": PASSWORD,
                                                  "next": next_url})
    assert response.status_code == 302
    return mailed_link(INVITED)


def press(browser, link: str, next_url: str | None):
    """The confirm page's button, as the browser posts it (to the path, ``next`` hidden)."""
    return browser.post(urlsplit(link).path, {"next": next_url} if next_url else {})


def test_the_mailed_link_signs_in_and_goes_on_to_the_invitation(team_crew):
    invitation = invite(team_crew)
    browser = CommitBrowserClient()
    login = browser.get(invitation)["Location"]
    signup = re.search(r'href="(/dashboard/signup\?next=[^"]+)"',
                       browser.get(login).content.decode()).group(1)
    assert browser.get(signup).status_code == 200

    link = sign_up(browser, invitation)
    assert "next=%2Fdashboard%2Finvitations%2F" in link
    page = browser.get(link)
    assert page.status_code == 200
    landed = press(browser, link, hidden_next(page.content.decode()))

    assert landed.status_code == 302
    assert landed["Location"] == invitation
    assert browser.get(invitation).status_code == 200
    assert browser.post(invitation)["Location"] == "/dashboard/"
    assert Membership.objects.get(user__email=INVITED).role == "editor"


def test_a_resent_link_goes_on_to_the_invitation_too(team_crew, clock):
    invitation = invite(team_crew)
    browser = CommitBrowserClient()
    first = sign_up(browser, invitation)
    clock.advance(seconds=61)  # past the resend interval

    browser.post("/dashboard/verify/resend", {"email": INVITED, "next": invitation})
    link = mailed_link(INVITED)

    assert link != first
    landed = press(browser, link, hidden_next(browser.get(link).content.decode()))
    assert landed["Location"] == invitation


def test_without_an_invitation_the_mailed_link_lands_home(db):
    browser = CommitBrowserClient()

    link = sign_up(browser, "/dashboard/")
    page = browser.get(link)

    assert "?" not in link
    assert hidden_next(page.content.decode()) is None
    assert press(browser, link, None)["Location"] == "/dashboard/"


EVIL = ["https://evil.example/phish", "//evil.example/phish", "/\\evil.example",
        "javascript:alert(1)", "http://testserver.evil.example/dashboard/"]


@pytest.mark.parametrize("evil", EVIL)
def test_a_crafted_next_in_the_link_lands_home(team_crew, evil):
    invite(team_crew)
    browser = CommitBrowserClient()
    link = sign_up(browser, "/dashboard/")
    crafted = f"{link}?next={evil}"

    page = browser.get(crafted)
    landed = press(browser, crafted, evil)  # a forged post carries it too

    assert hidden_next(page.content.decode()) is None
    assert landed.status_code == 302
    assert landed["Location"] == "/dashboard/"


@pytest.mark.parametrize("evil", EVIL)
def test_a_crafted_next_at_sign_up_never_reaches_the_mail(db, evil):
    link = sign_up(CommitBrowserClient(), evil)

    assert "next" not in link and "evil" not in link


def test_the_broker_never_carries_the_invitations_token(team_crew, monkeypatch):
    invitation = invite(team_crew)
    sent = []

    def recorded(real):
        def send(*args, **kwargs):
            sent.append(args)
            return real(*args, **kwargs)
        return send

    # The sign-up's task, then the mail's.
    monkeypatch.setattr(tasks, "enqueue", recorded(tasks.enqueue))
    monkeypatch.setattr(mails.send_code_email, "delay", recorded(mails.send_code_email.delay))

    link = sign_up(CommitBrowserClient(), invitation)

    assert TOKEN in link  # the mail carries it, as the invitation's own mail does
    assert len(sent) == 2
    assert all(TOKEN not in str(arg) for args in sent for arg in args)
