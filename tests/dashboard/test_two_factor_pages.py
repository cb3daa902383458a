"""Two-step sign-in in the dashboard and the admin (contract, "Account security")."""

import pyotp
import pytest
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


def test_the_dashboard_sign_in_asks_for_the_code(db):
    user = make_user(EMAIL)
    secret, codes = turn_on_two_factor(user)
    client = Client()

    without = client.post("/dashboard/login", {"email": EMAIL, "password": PASSWORD})
    with_code = client.post("/dashboard/login", {"email": EMAIL, "password": PASSWORD,
                                                 "otp": next_code(secret)})

    assert without.status_code == 401
    assert "Enter the code from your authenticator app" in without.content.decode()
    assert with_code.status_code == 302
    assert Client().post("/dashboard/login", {"email": EMAIL, "password": PASSWORD,
                                              "otp": codes[3]}).status_code == 302


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
