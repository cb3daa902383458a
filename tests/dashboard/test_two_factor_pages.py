"""Two-step sign-in in the dashboard and the admin (contract, "Account security")."""

import re
import time

import pyotp
import pytest
from django.conf import settings
from django.test import Client

from accounts.models import TwoFactor
from tests.conftest import PASSWORD, make_user, next_code, turn_on_two_factor

EMAIL = "owner@example.com"


@pytest.fixture
def browser(db):
    make_user(EMAIL)
    client = Client()
    assert client.post("/dashboard/login", {"email": EMAIL, "password": PASSWORD}
                       ).status_code == 302
    return client


def test_setup_draws_the_secret_as_an_inline_svg_qr_code(browser):
    made = browser.post("/dashboard/account/two-factor/setup")
    assert made.status_code == 302
    page = browser.get(made["Location"])

    text = page.content.decode()
    assert page.status_code == 200
    assert '<svg role="img" aria-label="QR code"' in text
    assert "https://" not in text.split('<div class="qr">')[1].split("</div>")[0]
    assert page["Cache-Control"] == "no-store"


def test_the_pages_turn_it_on_and_off(browser):
    browser.post("/dashboard/account/two-factor/setup")
    secret = pyotp.TOTP(_secret()).secret

    enabled = browser.post("/dashboard/account/two-factor/enable",
                           {"code": pyotp.TOTP(secret).now()})

    assert enabled.status_code == 302
    assert "ff_token" in enabled.cookies
    shown = browser.get(enabled["Location"])
    assert shown.content.decode().count("<li><code>") == 10
    assert TwoFactor.objects.get().enabled
    # Shown once: a reload of the page no longer has them.
    assert browser.get(enabled["Location"]).status_code == 302
    off = browser.post("/dashboard/account/two-factor/disable",
                       {"password": PASSWORD, "code": next_code(secret)})
    assert off.status_code == 302
    assert not TwoFactor.objects.exists()


def _secret() -> str:
    from accounts import two_factor

    return two_factor._totp(TwoFactor.objects.get()).secret


def test_a_wrong_code_at_enable_says_so(browser):
    browser.post("/dashboard/account/two-factor/setup")

    page = browser.post("/dashboard/account/two-factor/enable", {"code": "000000x"},
                        follow=True)

    assert page.redirect_chain[-1][0] == "/dashboard/account/two-factor/new"
    assert "newest code" in page.content.decode()
    assert not TwoFactor.objects.get().enabled


def _ticket(page) -> str:
    return re.search(r'name="ticket" value="([^"]+)"', page.content.decode()).group(1)


def test_the_sign_in_page_asks_only_for_address_and_password(db):
    page = Client().get("/dashboard/login").content.decode()

    assert 'name="email"' in page and 'name="password"' in page
    assert "Two-step" not in page and 'name="otp"' not in page


def test_an_account_with_two_step_gets_the_code_as_a_second_step(db):
    user = make_user(EMAIL)
    secret, codes = turn_on_two_factor(user)
    client = Client()

    first = client.post("/dashboard/login", {"email": EMAIL, "password": PASSWORD,
                                             "next": "/dashboard/account"})
    assert first.status_code == 200
    html = first.content.decode()
    assert "<h1>Two-step sign-in</h1>" in html and 'name="password"' not in html
    assert settings.AUTH_COOKIE_NAME not in first.cookies  # not signed in yet
    second = client.post("/dashboard/login/two-step", {
        "ticket": _ticket(first), "code": next_code(secret), "next": "/dashboard/account"})

    assert second.status_code == 302 and second["Location"] == "/dashboard/account"
    assert client.get("/dashboard/account").status_code == 200
    again = Client().post("/dashboard/login", {"email": EMAIL, "password": PASSWORD})
    assert Client().post("/dashboard/login/two-step", {
        "ticket": _ticket(again), "code": codes[3]}).status_code == 302  # a recovery code


def test_a_wrong_code_stays_on_the_second_step_and_counts_as_a_failed_sign_in(db):
    user = make_user(EMAIL)
    turn_on_two_factor(user)
    client = Client()
    ticket = _ticket(client.post("/dashboard/login", {"email": EMAIL, "password": PASSWORD}))

    answers = [client.post("/dashboard/login/two-step", {"ticket": ticket, "code": "000000"})
               for _ in range(11)]

    assert answers[0].status_code == 401
    assert "wrong or was used already" in answers[0].content.decode()
    assert _ticket(answers[0]) == ticket  # the page keeps the step, not the password
    assert answers[-1].status_code == 429  # the failed sign-in limit spans both steps
    assert answers[-1].has_header("Retry-After")


def test_a_wrong_password_never_tells_that_two_step_is_on(db):
    user = make_user(EMAIL)
    turn_on_two_factor(user)

    page = Client().post("/dashboard/login", {"email": EMAIL, "password": "wrong-password"})

    assert page.status_code == 401
    assert "Two-step" not in page.content.decode()


@pytest.mark.parametrize("ticket", ["", "forged", "W1sxLDBd:forged:sig"])
def test_a_forged_ticket_signs_no_one_in(db, ticket):
    user = make_user(EMAIL)
    secret, _ = turn_on_two_factor(user)

    page = Client().post("/dashboard/login/two-step", {"ticket": ticket,
                                                       "code": next_code(secret)})

    assert page.status_code in (302, 400)
    assert settings.AUTH_COOKIE_NAME not in page.cookies


def test_a_password_change_after_the_first_step_ends_the_sign_in(db):
    user = make_user(EMAIL)
    secret, _ = turn_on_two_factor(user)
    ticket = _ticket(Client().post("/dashboard/login", {"email": EMAIL, "password": PASSWORD}))
    user.set_password("another-long-passphrase")
    user.save()

    page = Client().post("/dashboard/login/two-step", {"ticket": ticket,
                                                       "code": next_code(secret)})

    assert page.status_code == 302 and page["Location"] == "/dashboard/login"
    assert settings.AUTH_COOKIE_NAME not in page.cookies


def test_turning_two_step_off_after_the_first_step_ends_the_sign_in(db):
    """With two-step off, the second step asks for no code: a ticket minted before would sign
    in on its own, with any code. Turning it off revokes the ticket with every token."""
    from accounts import two_factor

    user = make_user(EMAIL)
    _, codes = turn_on_two_factor(user)
    ticket = _ticket(Client().post("/dashboard/login", {"email": EMAIL, "password": PASSWORD}))
    two_factor.disable(user=user, password=PASSWORD, code=codes[0])

    page = Client().post("/dashboard/login/two-step", {"ticket": ticket, "code": "000000"})

    assert page.status_code == 302 and page["Location"] == "/dashboard/login"
    assert settings.AUTH_COOKIE_NAME not in page.cookies


def test_a_reset_by_mailed_link_after_the_first_step_ends_the_sign_in(api):
    from tests.accounts.test_code_links import forgot, last_link

    user = make_user(EMAIL)
    secret, _ = turn_on_two_factor(user)
    ticket = _ticket(Client().post("/dashboard/login", {"email": EMAIL, "password": PASSWORD}))
    forgot(api)
    assert Client().post(last_link(), {"password": "another long passphrase"}
                         ).status_code == 302

    page = Client().post("/dashboard/login/two-step", {"ticket": ticket,
                                                       "code": next_code(secret)})

    assert page.status_code == 302 and page["Location"] == "/dashboard/login"


def test_the_ticket_lasts_five_minutes(db, monkeypatch):
    user = make_user(EMAIL)
    secret, _ = turn_on_two_factor(user)
    ticket = _ticket(Client().post("/dashboard/login", {"email": EMAIL, "password": PASSWORD}))
    later = time.time() + 301
    monkeypatch.setattr(time, "time", lambda: later)

    page = Client().post("/dashboard/login/two-step", {"ticket": ticket,
                                                       "code": next_code(secret)})

    assert page.status_code == 302 and page["Location"] == "/dashboard/login"


def test_the_admin_asks_staff_for_the_code(db):
    operator = make_user("ops@example.com", is_staff=True, is_superuser=True)
    secret, _ = turn_on_two_factor(operator)
    body = {"username": "ops@example.com", "password": PASSWORD}

    without = Client().post("/admin/login/", body)
    wrong = Client().post("/admin/login/", {**body, "otp": "000000x"})
    right = Client().post("/admin/login/?next=/admin/",
                          {**body, "otp": next_code(secret), "next": "/admin/"})

    assert without.status_code == 200
    assert 'name="otp"' in without.content.decode()
    assert "Enter the code from your authenticator app" in without.content.decode()
    assert wrong.status_code == 200
    assert right.status_code == 302
    assert right["Location"] == "/admin/"


def test_staff_without_two_step_sign_in_are_sent_to_set_it_up(db):
    make_user("ops@example.com", is_staff=True, is_superuser=True)
    client = Client()

    response = client.post("/admin/login/", {"username": "ops@example.com",
                                             "password": PASSWORD})

    assert response.status_code == 302
    assert response["Location"] == "/dashboard/account/two-factor"
    assert client.get("/admin/").status_code == 302  # not signed in to the admin
    assert client.get("/dashboard/account/two-factor").status_code == 200
