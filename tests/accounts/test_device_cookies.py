"""Device cookies (contract, "Account security"): a successful sign-in leaves ``ff_device``;
past 100 failures for one address in an hour only clients presenting it may sign in, and the
owner is emailed once."""

import pytest
from django.core import mail
from django.test import Client

from accounts import device
from tests.conftest import PASSWORD, CommitClient, make_user

EMAIL = "owner@example.com"
YEAR = 365 * 24 * 3600


@pytest.fixture
def owner(db):
    return make_user(EMAIL, is_staff=True, is_superuser=True)


def api_login(client, password, ip, path="/api/auth/login"):
    return client.post(path, {"email": EMAIL, "password": password}, format="json",
                       REMOTE_ADDR=ip)


def distributed_attack(failures=100):
    """Wrong passwords from as many client addresses: past the 100th the address is shut."""
    attacker = CommitClient()
    for n in range(failures):
        ip = f"10.{n // 250}.{n % 250}.1"
        expected = 401 if n < 100 else 429
        assert api_login(attacker, "wrong password!", ip).status_code == expected


def test_api_login_sets_the_device_cookie(api, owner):
    response = api_login(api, PASSWORD, "203.0.113.1")

    cookie = response.cookies["ff_device"]
    assert cookie.value
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert cookie["max-age"] == YEAR
    assert cookie["path"] == "/"


@pytest.mark.parametrize(
    ("path", "field"), [("/dashboard/login", "email"), ("/admin/login/", "username")]
)
def test_the_sign_in_pages_set_the_device_cookie(owner, path, field):
    response = Client().post(path, {field: EMAIL, "password": PASSWORD},
                             REMOTE_ADDR="203.0.113.1")

    assert response.status_code == 302
    assert response.cookies["ff_device"]["max-age"] == YEAR
    assert response.cookies["ff_device"]["httponly"] is True


def test_a_failed_sign_in_sets_no_device_cookie(api, owner):
    assert "ff_device" not in api_login(api, "wrong password!", "203.0.113.1").cookies


def test_the_device_cookie_lets_the_owner_in_during_a_distributed_attack(api, owner):
    assert api_login(api, PASSWORD, "203.0.113.1").status_code == 200  # a device used before
    distributed_attack()

    stranger = api_login(CommitClient(), PASSWORD, "192.0.2.50")
    on_the_owners_device = api_login(api, PASSWORD, "192.0.2.77")  # the cookie, a new network

    assert stranger.status_code == 429
    assert stranger.json()["error"] == "too_many_attempts"
    assert int(stranger["Retry-After"]) > 0
    assert on_the_owners_device.status_code == 200


def test_ninety_nine_failures_still_let_new_clients_in(api, owner):
    distributed_attack(failures=99)

    assert api_login(CommitClient(), PASSWORD, "192.0.2.50").status_code == 200


def test_the_owner_is_emailed_once(api, owner):
    distributed_attack(failures=130)

    alerts = [m for m in mail.outbox if "failed sign-ins" in m.subject]
    assert len(alerts) == 1
    assert alerts[0].to == [EMAIL]


def test_another_accounts_device_cookie_does_not_count(api, owner):
    make_user("other@example.com")
    other = CommitClient()
    other.post("/api/auth/login", {"email": "other@example.com", "password": PASSWORD},
               format="json", REMOTE_ADDR="203.0.113.2")
    assert other.cookies["ff_device"].value
    distributed_attack()

    assert api_login(other, PASSWORD, "203.0.113.2").status_code == 429


def test_a_forged_device_cookie_does_not_count(api, owner):
    distributed_attack()
    forged = CommitClient()
    forged.cookies[device.COOKIE_NAME] = f'{{"u": "{owner.pk}", "d": "x"}}'

    assert api_login(forged, PASSWORD, "192.0.2.50").status_code == 429


def test_token_sign_in_honours_the_device_cookie(api, owner):
    api_login(api, PASSWORD, "203.0.113.1")
    distributed_attack()

    assert api_login(api, PASSWORD, "192.0.2.77", path="/api/auth/token").status_code == 200
    assert api_login(CommitClient(), PASSWORD, "192.0.2.78",
                     path="/api/auth/token").status_code == 429


@pytest.mark.parametrize("surface", ["api", "dashboard"])
def test_verification_signs_in_and_sets_the_device_cookie(db, settings, surface):
    """The owner who just verified holds a device cookie, so a distributed attack on the
    address afterwards never stops them."""
    from tests.conftest import last_code

    settings.AUTH_COOKIE_SECURE = True
    client = CommitClient()
    client.post("/api/auth/signup", {"email": EMAIL, "password": PASSWORD},
                content_type="application/json", REMOTE_ADDR="203.0.113.1")
    body = {"email": EMAIL, "code": last_code(EMAIL)}
    if surface == "api":
        response = client.post("/api/auth/verify-email", body,
                               content_type="application/json", REMOTE_ADDR="203.0.113.1")
        assert response.status_code == 200
    else:
        response = client.post("/dashboard/verify", body, REMOTE_ADDR="203.0.113.1")
        assert response.status_code == 302

    cookie = response.cookies["ff_device"]
    assert cookie["httponly"] is True
    assert cookie["secure"] is True
    assert cookie["samesite"] == "Lax"
    assert cookie["max-age"] == YEAR
    distributed_attack()
    assert api_login(client, PASSWORD, "198.51.100.9").status_code == 200
