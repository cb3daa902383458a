"""Password guessing: failed sign-ins are limited per address across every sign-in surface,
and each unauthenticated page per client address (IPv6 per /64)."""

import pytest
from django.test import Client

from accounts import signin_guard
from tests.conftest import PASSWORD, make_user

EMAIL = "owner@example.com"


@pytest.fixture
def owner(db):
    return make_user(EMAIL, is_staff=True, is_superuser=True)


def api_login(api, password, ip, path="/api/auth/login"):
    body = {"email": EMAIL, "password": password}
    return api.post(path, body, format="json", REMOTE_ADDR=ip)


def dashboard_login(password, ip):
    return Client().post(
        "/dashboard/login", {"email": EMAIL, "password": password}, REMOTE_ADDR=ip
    )


def admin_login(password, ip):
    return Client().post(
        "/admin/login/", {"username": EMAIL, "password": password}, REMOTE_ADDR=ip
    )


def test_ten_failures_from_one_client_block_that_client(api, owner):
    for _ in range(10):
        assert api_login(api, "wrong password!", "198.51.100.7").status_code == 401

    blocked = api_login(api, PASSWORD, "198.51.100.7")

    assert blocked.status_code == 429
    assert blocked.json()["error"] == "too_many_attempts"
    assert 0 < int(blocked["Retry-After"]) <= 15 * 60


def test_a_strangers_failures_from_another_client_never_lock_the_owner(api, owner):
    for _ in range(15):
        api_login(api, "wrong password!", "198.51.100.7")

    assert api_login(api, PASSWORD, "203.0.113.1").status_code == 200
    assert dashboard_login(PASSWORD, "203.0.113.1").status_code == 302
    assert admin_login(PASSWORD, "203.0.113.1").status_code == 302


def test_failures_count_across_every_sign_in_surface(api, owner):
    ip = "198.51.100.7"
    for _ in range(4):
        assert api_login(api, "wrong password!", ip).status_code == 401
    for _ in range(3):
        assert api_login(api, "wrong password!", ip, path="/api/auth/token").status_code == 401
    for _ in range(2):
        assert dashboard_login("wrong password!", ip).status_code == 401
    assert admin_login("wrong password!", ip).status_code == 200  # the form again

    assert admin_login(PASSWORD, ip).status_code == 429
    assert dashboard_login(PASSWORD, ip).status_code == 429
    assert api_login(api, PASSWORD, ip, path="/api/auth/token").status_code == 429
    assert api_login(api, PASSWORD, "203.0.113.4").status_code == 200


def test_ipv6_failures_count_per_64(api, owner):
    for n in range(10):
        api_login(api, "wrong password!", f"2001:db8:0:1::{n + 1:x}")

    assert api_login(api, PASSWORD, "2001:db8:0:1:ffff::1").status_code == 429
    assert api_login(api, PASSWORD, "2001:db8:0:2::1").status_code == 200


def test_the_limit_ends_with_its_window(api, owner, monkeypatch):
    from core.infra import ratelimit

    for _ in range(10):
        api_login(api, "wrong password!", "198.51.100.7")
    assert api_login(api, PASSWORD, "198.51.100.7").status_code == 429

    later = ratelimit.now() + signin_guard.WINDOW_SECONDS
    monkeypatch.setattr(ratelimit, "now", lambda: later)

    assert api_login(api, PASSWORD, "198.51.100.7").status_code == 200


def test_a_right_password_inside_the_limit_still_signs_in(api, owner):
    for _ in range(9):
        api_login(api, "wrong password!", "198.51.100.7")

    assert api_login(api, PASSWORD, "198.51.100.7").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/dashboard/login",
        "/dashboard/signup",
        "/dashboard/verify",
        "/dashboard/forgot-password",
        "/dashboard/reset-password",
        "/admin/login/",
    ],
)
def test_unauthenticated_pages_take_twenty_requests_a_minute_per_address(db, path):
    client = Client()
    for _ in range(20):
        assert client.get(path, REMOTE_ADDR="198.51.100.7").status_code == 200

    limited = client.get(path, REMOTE_ADDR="198.51.100.7")

    assert limited.status_code == 429
    assert int(limited["Retry-After"]) >= 1
    assert client.get(path, REMOTE_ADDR="198.51.100.8").status_code == 200


def test_ipv6_clients_are_counted_per_64(db):
    client = Client()
    for n in range(20):
        client.get("/dashboard/login", REMOTE_ADDR=f"2001:db8:0:1::{n + 1:x}")

    same_64 = client.get("/dashboard/login", REMOTE_ADDR="2001:db8:0:1:ffff::1")
    other_64 = client.get("/dashboard/login", REMOTE_ADDR="2001:db8:0:2::1")

    assert same_64.status_code == 429
    assert other_64.status_code == 200


@pytest.mark.parametrize("path", ["/dashboard/login", "/api/auth/forgot-password"])
def test_an_operator_can_lift_the_per_address_limit(db, settings, path):
    settings.AUTH_REQUESTS_PER_MINUTE = 30
    client = Client()

    def status() -> int:
        if path.startswith("/api/"):
            return client.post(path, {"email": "a@example.com"}, content_type="application/json",
                               REMOTE_ADDR="198.51.100.7").status_code
        return client.get(path, REMOTE_ADDR="198.51.100.7").status_code

    statuses = [status() for _ in range(31)]

    assert 429 not in statuses[:30]
    assert statuses[30] == 429
