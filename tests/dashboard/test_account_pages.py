"""The dashboard's pages for forgot and reset password, change password and log out
everywhere: each calls the same service as the API."""

import pytest

from accounts.services import token_for
from tests.conftest import PASSWORD, CommitClient, last_code
from tests.conftest import CommitBrowserClient as Client

NEW_PASSWORD = "another long passphrase"


def api_status_with(token) -> int:
    api = CommitClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return api.get("/api/auth/me").status_code


def test_login_page_links_to_forgot_password(client, db):
    assert 'href="/dashboard/forgot-password"' in client.get("/dashboard/login").content.decode()


def test_forgot_then_reset_then_log_in(client, user):
    assert client.get("/dashboard/forgot-password").status_code == 200

    asked = client.post("/dashboard/forgot-password", {"email": user.email})
    assert asked.status_code == 302
    assert asked["Location"] == "/dashboard/reset-password?email=owner%40example.com"
    assert client.get(asked["Location"]).status_code == 200

    done = client.post(
        "/dashboard/reset-password",
        {"email": user.email, "code": last_code(user.email), "password": NEW_PASSWORD},
    )
    assert done.status_code == 302
    assert done["Location"] == "/dashboard/login"

    signed_in = client.post("/dashboard/login", {"email": user.email, "password": NEW_PASSWORD})
    assert signed_in.status_code == 302
    assert client.get("/dashboard/").status_code == 200


def test_reset_page_shows_a_wrong_code(client, user):
    client.post("/dashboard/forgot-password", {"email": user.email})

    response = client.post(
        "/dashboard/reset-password",
        {"email": user.email, "code": "not-a-code", "password": NEW_PASSWORD},
    )

    assert response.status_code == 400
    assert "The code is wrong or has expired." in response.content.decode()
    user.refresh_from_db()
    assert user.check_password(PASSWORD)


def test_account_page_needs_login(client, db):
    response = client.get("/dashboard/account")

    assert response.status_code == 302
    assert response["Location"].startswith("/dashboard/login")


def test_change_password_keeps_this_session_and_ends_the_others(owner, user):
    elsewhere = token_for(user)
    page = owner.get("/dashboard/account")
    assert page.status_code == 200
    assert 'action="/dashboard/account/password"' in page.content.decode()

    response = owner.post(
        "/dashboard/account/password",
        {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD},
    )

    assert response.status_code == 302
    assert owner.get("/dashboard/").status_code == 200
    assert api_status_with(elsewhere) == 401
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)


def test_change_password_with_a_wrong_current_password_shows_why(owner, user):
    response = owner.post(
        "/dashboard/account/password",
        {"currentPassword": "not the password", "newPassword": NEW_PASSWORD},
    )

    assert response.status_code == 400
    assert "The current password is incorrect." in response.content.decode()
    user.refresh_from_db()
    assert user.check_password(PASSWORD)


def test_log_out_everywhere_from_the_dashboard(owner, user):
    elsewhere = token_for(user)

    response = owner.post("/dashboard/account/logout-all")

    assert response.status_code == 302
    assert response["Location"] == "/dashboard/login"
    assert api_status_with(elsewhere) == 401
    assert owner.get("/dashboard/").status_code == 302


def test_account_pages_refuse_a_post_without_csrf(user):
    browser = Client(enforce_csrf_checks=True)
    browser.cookies["ff_token"] = str(token_for(user))

    response = browser.post("/dashboard/account/logout-all")

    assert response.status_code == 403
    assert api_status_with(token_for(user)) == 200


def test_verify_page_past_the_daily_wrong_codes_is_429_with_retry_after(client, db):
    client.post("/dashboard/signup", {"email": "new@example.com", "password": NEW_PASSWORD})
    for n in range(20):
        client.post(
            "/dashboard/verify", {"email": "new@example.com", "code": "x"},
            REMOTE_ADDR=f"198.51.100.{n}",
        )

    response = client.post(
        "/dashboard/verify", {"email": "new@example.com", "code": "x"}, REMOTE_ADDR="203.0.113.1"
    )

    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert "Too many wrong codes" in response.content.decode()


def test_forgot_page_while_the_broker_is_away_says_so(client, user):
    from core.infra.broker import breaker

    breaker.trip()
    try:
        response = client.post("/dashboard/forgot-password", {"email": user.email})
    finally:
        breaker.reset()

    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0


@pytest.mark.parametrize(
    ("path", "posted", "missing"),
    [
        ("/dashboard/signup", {"email": "new@example.com"}, "password"),
        ("/dashboard/login", {"password": "x"}, "email"),
        ("/dashboard/verify", {"email": "new@example.com"}, "code"),
        ("/dashboard/forgot-password", {}, "email"),
        ("/dashboard/reset-password", {"email": "a@example.com", "code": "123456"}, "password"),
    ],
)
def test_a_missing_field_is_named_on_the_page_and_nothing_happens(client, db, path, posted,
                                                                  missing):
    from accounts.models import EmailCode, User

    response = client.post(path, posted)

    assert response.status_code == 400
    html = response.content.decode()
    field = html[html.index(f'id="{missing}"'):]
    assert 'class="field-error" role="alert">This field is required.' in field
    assert not User.objects.filter(email="new@example.com").exists()
    assert not EmailCode.objects.exists()


def test_account_forms_give_the_browser_its_hints(client, db):
    signup = client.get("/dashboard/signup").content.decode()
    reset = client.get("/dashboard/reset-password?email=a%40example.com").content.decode()

    assert '<label for="email">Email</label>' in signup
    assert 'autocomplete="new-password"' in signup and 'minlength="8"' in signup
    assert 'aria-describedby="password-hint"' in signup and 'id="password-hint"' in signup
    assert 'value="a@example.com"' in reset
    assert 'autocomplete="one-time-code"' in reset and 'maxlength="6"' in reset
