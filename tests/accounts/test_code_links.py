"""The link mailed beside every code, and the one cap on wrong codes (contract, "Account
security"): strangers get at most 20 guesses a day per address and purpose, from however many
client addresses, and the owner always has the link, which no wrong code stops."""

import hashlib
import logging
import re

import pytest
from django.conf import settings
from django.core import mail

from accounts.models import EmailCode, User
from tests.conftest import PASSWORD, CommitBrowserClient, last_code, make_user

EMAIL = "owner@example.com"
OWNER_IP = "203.0.113.5"
NEW_PASSWORD = "another long passphrase"
LINK = re.compile(r"(\S+/dashboard/confirm/([A-Za-z0-9_-]+))")


@pytest.fixture(autouse=True)
def _behind_a_proxy(settings):
    """Caddy in front: the client address is the one X-Forwarded-For names."""
    settings.TRUSTED_PROXY_COUNT = 1


def last_link(address: str = EMAIL) -> str:
    """The confirm page's path from the newest mail to ``address``."""
    for message in reversed(mail.outbox):
        if address in message.to:
            return "/dashboard/confirm/" + LINK.search(message.body).group(2)
    raise AssertionError(f"no link was mailed to {address}")


def wrong(code: str) -> str:
    return "000000" if code != "000000" else "111111"


def at(ip: str) -> dict:
    return {"HTTP_X_FORWARDED_FOR": ip}


def sign_up(api, ip=OWNER_IP, password=PASSWORD):
    api.post("/api/auth/signup", {"email": EMAIL, "password": password}, format="json", **at(ip))
    return last_code(EMAIL)


def resend(api, ip):
    api.post("/api/auth/resend-otp", {"email": EMAIL}, format="json", **at(ip))


def forgot(api, ip=OWNER_IP):
    api.post("/api/auth/forgot-password", {"email": EMAIL}, format="json", **at(ip))
    return last_code(EMAIL)


def verify(api, code, ip):
    return api.post("/api/auth/verify-email", {"email": EMAIL, "code": code}, format="json",
                    **at(ip))


def reset(api, code, ip):
    body = {"email": EMAIL, "code": code, "password": NEW_PASSWORD}
    return api.post("/api/auth/reset-password", body, format="json", **at(ip))


def press(browser, link, ip=OWNER_IP, **data):
    return browser.post(link, data, **at(ip))


def assert_capped(response):
    assert response.status_code == 429
    assert response.json()["error"] == "too_many_attempts"
    assert "link" in response.json()["message"]
    assert 0 < int(response["Retry-After"]) <= 86400 + 900  # 24 h, counted in quarter hours


# --- The mail -------------------------------------------------------------------------------


@pytest.mark.parametrize("purpose", ["verify", "reset"])
def test_every_code_mail_carries_a_one_time_link(api, db, purpose):
    if purpose == "verify":
        sign_up(api)
    else:
        make_user(EMAIL)
        forgot(api)
    message = mail.outbox[-1]

    url, token = LINK.search(message.body).groups()

    assert url == f"{settings.BASE_URL}/dashboard/confirm/{token}"
    assert len(token) == 43  # 32 random bytes, URL-safe base64
    for content, _type in getattr(message, "alternatives", []):  # an HTML part, if any
        assert url in content
    stored = EmailCode.objects.get()
    assert stored.link_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in str(EmailCode.objects.values().get())


# --- The reproduced lockout -----------------------------------------------------------------


def test_a_stranger_with_ten_addresses_no_longer_locks_the_owner_out(api, db, clock):
    """The sequence that ended in the owner's 429: the stranger takes the hour's 5 sends, each
    from a new address, then spends the day's wrong tries and more from the rest. The owner
    still has the newest mail's link, which verifies and signs in."""
    sign_up(api)
    for n in range(4):  # with the sign-up's, the hour's 5 sends
        clock.advance(seconds=61)
        resend(api, f"198.51.100.{n}")
    code, link = last_code(EMAIL), last_link()
    for n in range(25):
        verify(api, wrong(code), f"198.51.100.{4 + n % 6}")
    clock.advance(seconds=61)
    resend(api, OWNER_IP)  # the owner asks on a new device: the hour's sends are gone
    assert last_code(EMAIL) == code

    assert_capped(verify(api, code, OWNER_IP))

    browser = CommitBrowserClient()
    assert browser.get(link, **at(OWNER_IP)).status_code == 200
    signed_in = press(browser, link)
    assert signed_in.status_code == 302
    assert User.objects.get(email=EMAIL).is_verified
    assert browser.get("/api/auth/me").status_code == 200


# --- Opening the link -----------------------------------------------------------------------


def test_opening_the_link_spends_nothing(api, client):
    """Mail scanners fetch links: a GET (or HEAD) changes nothing, the code and link live on."""
    code = sign_up(api)
    link = last_link()
    before = EmailCode.objects.values().get()

    for _ in range(3):
        assert client.get(link, **at("192.0.2.80")).status_code == 200
    assert client.head(link, **at("192.0.2.81")).status_code == 200

    assert EmailCode.objects.values().get() == before
    assert not User.objects.get(email=EMAIL).is_verified
    assert "ff_token" not in client.cookies
    assert verify(api, code, OWNER_IP).status_code == 200


def test_the_page_shows_one_button_and_keeps_the_token_from_other_sites(api, client):
    sign_up(api)

    page = client.get(last_link(), **at(OWNER_IP))

    assert page["Referrer-Policy"] == "same-origin"
    assert page.content.decode().count("<button") == 1
    assert "no-store" in page["Cache-Control"]


@pytest.mark.parametrize("purpose", ["verify", "reset"])
def test_the_page_names_the_address_it_is_for(api, client, purpose):
    """Login CSRF by mail: a stranger sends someone the link of an account the stranger made,
    and a press would sign that someone in to it (everything they then set up is the
    stranger's). The page says whose account it is before the button."""
    if purpose == "verify":
        sign_up(api)
    else:
        make_user(EMAIL)
        forgot(api)

    page = client.get(last_link(), **at("192.0.2.44")).content.decode()

    assert f"<strong>{EMAIL}</strong>" in page
    assert "Not your address?" in page


def test_the_button_passes_the_csrf_check_with_the_browsers_own_origin(api, db):
    sign_up(api)
    link = last_link()
    browser = CommitBrowserClient(enforce_csrf_checks=True)
    browser.get(link, **at(OWNER_IP))
    token = browser.cookies["csrftoken"].value

    # What "no-referrer" would make a browser send: refused, which is why the page never uses it.
    assert browser.post(link, {"csrfmiddlewaretoken": token}, HTTP_ORIGIN="null",
                        **at(OWNER_IP)).status_code == 403
    assert browser.post(link, {}, HTTP_ORIGIN="http://testserver",
                        **at(OWNER_IP)).status_code == 403
    pressed = browser.post(link, {"csrfmiddlewaretoken": token},
                           HTTP_ORIGIN="http://testserver", **at(OWNER_IP))

    assert pressed.status_code == 302
    assert User.objects.get(email=EMAIL).is_verified


def test_a_refused_press_leaves_no_live_token_in_the_log(api, db, caplog):
    """A post without the CSRF cookie (a mail scanner's, a browser that blocks cookies) is
    refused, and Django's refusal names the path: the log keeps no usable link."""
    sign_up(api)
    link = last_link()
    token = link.rsplit("/", 1)[1]

    with caplog.at_level(logging.INFO):
        refused = CommitBrowserClient(enforce_csrf_checks=True).post(link, {}, **at(OWNER_IP))
        logging.getLogger("django.request").error("Internal Server Error: %s", link)

    assert refused.status_code == 403
    assert "/dashboard/confirm/<token>" in caplog.text
    assert token not in caplog.text


def test_pressing_the_button_signs_in_like_any_sign_in(api, client):
    sign_up(api)

    pressed = press(client, last_link())

    assert pressed.status_code == 302
    assert pressed["Location"] == "/dashboard/"
    assert pressed.cookies["ff_token"]["httponly"]
    assert pressed.cookies["ff_device"]["httponly"]
    assert client.get("/api/auth/me").json()["user"]["email"] == EMAIL
    login = api.post("/api/auth/login", {"email": EMAIL, "password": PASSWORD}, format="json")
    assert login.status_code == 200


# --- Single use, dies with its code ---------------------------------------------------------


def invalid(response) -> bool:
    return response.status_code == 404 and b"no longer works" in response.content


def test_the_link_works_once(api, client):
    sign_up(api)
    link = last_link()
    assert press(client, link).status_code == 302

    other = CommitBrowserClient()
    assert invalid(other.get(link, **at("192.0.2.7")))
    again = press(other, link, ip="192.0.2.7")
    assert invalid(again)
    assert "ff_token" not in again.cookies


def test_using_the_link_uses_up_the_code(api, client):
    code = sign_up(api)
    press(client, last_link())

    assert verify(api, code, OWNER_IP).json()["error"] == "invalid_code"


def test_using_the_code_uses_up_the_link(api, client):
    code = sign_up(api)
    link = last_link()
    assert verify(api, code, OWNER_IP).status_code == 200

    assert invalid(press(client, link))


def test_a_new_code_kills_the_old_link(api, client, clock):
    sign_up(api)
    old = last_link()
    clock.advance(seconds=61)
    resend(api, OWNER_IP)
    new = last_link()
    assert new != old

    assert invalid(press(client, old))
    assert not User.objects.get(email=EMAIL).is_verified
    assert press(client, new).status_code == 302


def test_an_expired_link_changes_nothing(api, client, clock):
    sign_up(api)
    link = last_link()
    clock.advance(minutes=31)

    assert invalid(client.get(link, **at(OWNER_IP)))
    assert invalid(press(client, link))
    assert not User.objects.get(email=EMAIL).is_verified


def test_an_unknown_link_shows_the_same_page(client):
    unknown = client.get("/dashboard/confirm/" + "A" * 43, **at(OWNER_IP))
    odd = client.post("/dashboard/confirm/%ff'<x>", **at(OWNER_IP))
    nul = client.post("/dashboard/confirm/%00", **at(OWNER_IP))

    assert invalid(unknown)
    assert invalid(odd)
    assert nul.status_code == 404  # refused before the page, never a 500


# --- One cap for codes, from everyone together ----------------------------------------------


def test_five_wrong_tries_from_anyone_kill_the_code_but_not_the_link(api, client, db):
    make_user(EMAIL)
    code = forgot(api)
    link = last_link()
    for n in range(5):
        assert reset(api, wrong(code), f"198.51.100.{n}").status_code == 400

    assert reset(api, code, OWNER_IP).json()["error"] == "invalid_code"
    assert press(client, link).status_code == 200  # the set-a-new-password form


def test_twenty_wrong_tries_from_many_addresses_cap_everyone_but_the_link(api, client, db,
                                                                          clock):
    make_user(EMAIL)
    forgot(api)
    for n in range(20):
        clock.advance(seconds=61)  # a fresh code every time: each still costs one of the 20
        code = forgot(api, ip=f"2001:db8:{n}::1")
        assert reset(api, wrong(code), f"2001:db8:{n}::1").status_code == 400
    code, link = last_code(EMAIL), last_link()

    assert_capped(reset(api, code, "192.0.2.99"))
    assert_capped(reset(api, code, OWNER_IP))  # whoever sends it, the right code too

    assert press(client, link).status_code == 200
    done = press(client, link, password=NEW_PASSWORD)
    assert done.status_code == 302 and done["Location"] == "/dashboard/login"
    assert User.objects.get(email=EMAIL).check_password(NEW_PASSWORD)

    clock.advance(seconds=61)
    fresh = forgot(api)  # the link lifted the cap: codes work again
    body = {"email": EMAIL, "code": fresh, "password": "a third long passphrase"}
    assert api.post("/api/auth/reset-password", body, format="json",
                    **at(OWNER_IP)).status_code == 200


def test_the_cap_is_per_purpose(api, db):
    make_user(EMAIL, verified=False)
    for n in range(20):
        reset(api, "123456", f"198.51.100.{n}")
    assert_capped(reset(api, "123456", OWNER_IP))

    code = sign_up(api)
    assert verify(api, code, OWNER_IP).status_code == 200


def test_no_more_than_twenty_tries_get_an_answer_in_any_24_hours(api, db, monkeypatch):
    """The contract: past 20 wrong tries in 24 h, every try is 429. Twenty tries a minute
    before midnight (UTC) and twenty a minute after are forty in two minutes."""
    from core.infra import ratelimit

    make_user(EMAIL)
    midnight = (int(ratelimit.now()) // 86400 + 1) * 86400
    answered = 0
    for offset in (-60, 60):
        monkeypatch.setattr(ratelimit, "now", lambda offset=offset: midnight + offset)
        for n in range(25):
            ip = f"198.51.{100 + offset // 60 + 1}.{n}"
            answered += reset(api, "123456", ip).status_code != 429

    assert answered <= 20


def test_the_cap_ends_when_its_tries_are_a_day_old_however_long_strangers_knock(api, db,
                                                                              monkeypatch):
    from core.infra import ratelimit

    make_user(EMAIL)
    start = ratelimit.now()
    for n in range(20):
        assert reset(api, "123456", f"198.51.100.{n}").status_code == 400
    monkeypatch.setattr(ratelimit, "now", lambda: start + 12 * 3600)
    for n in range(20):  # refused tries are no guesses: they keep the cap no longer
        refused = reset(api, "123456", f"198.51.101.{n}")
    assert_capped(refused)
    wait = int(refused["Retry-After"])
    assert 12 * 3600 - 900 <= wait <= 12 * 3600 + 900

    monkeypatch.setattr(ratelimit, "now", lambda: start + 12 * 3600 + wait - 1)
    assert_capped(reset(api, "123456", OWNER_IP))
    monkeypatch.setattr(ratelimit, "now", lambda: start + 12 * 3600 + wait)
    assert reset(api, "123456", OWNER_IP).status_code == 400


def test_the_answers_tell_no_one_whether_the_address_has_an_account(api, db, monkeypatch):
    monkeypatch.setattr("accounts.codes.new_code", lambda: "123456")
    make_user("known@example.com")

    def answers(address):
        api.post("/api/auth/forgot-password", {"email": address}, format="json",
                 **at("192.0.2.1"))
        body = {"email": address, "code": "000000", "password": NEW_PASSWORD}
        seen = []
        for n in range(23):
            response = api.post("/api/auth/reset-password", body, format="json",
                                **at(f"192.0.2.{n}"))
            seen.append((response.status_code, response.json()["error"]))
        return seen

    known, unknown = answers("known@example.com"), answers("nobody@example.com")

    assert known == unknown
    assert {status for status, _ in known} == {400, 429}


# --- Setting a password through the link ----------------------------------------------------


def test_the_reset_link_sets_the_password_verifies_and_revokes_earlier_tokens(owner_api, client,
                                                                            user):
    user.is_verified = False
    user.save(update_fields=["is_verified"])
    owner_api.post("/api/auth/forgot-password", {"email": user.email}, format="json")
    link = last_link(user.email)

    form = press(client, link)
    assert form.status_code == 200 and b'name="password"' in form.content
    assert press(client, link, password=NEW_PASSWORD).status_code == 302

    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD) and user.is_verified
    assert owner_api.get("/api/auth/me").status_code == 401
    assert invalid(press(client, link, password="yet another passphrase"))


def test_a_password_change_kills_a_reset_link_and_code_mailed_before_it(owner_api, client):
    """The owner asked for a reset (or someone did), then changed the password while signed
    in: whoever saw that mail must not set the password over the change."""
    forgot(owner_api)
    code, link = last_code(EMAIL), last_link()

    changed = owner_api.post("/api/auth/change-password", {
        "currentPassword": PASSWORD, "newPassword": "a fresh long passphrase"}, format="json")

    assert changed.status_code == 200
    assert invalid(client.get(link, **at(OWNER_IP)))
    assert invalid(press(client, link, password=NEW_PASSWORD))
    assert reset(owner_api, code, OWNER_IP).json()["error"] == "invalid_code"
    assert User.objects.get(email=EMAIL).check_password("a fresh long passphrase")


def test_a_weak_password_through_the_link_keeps_the_link(client, user, api):
    api.post("/api/auth/forgot-password", {"email": user.email}, format="json")
    link = last_link(user.email)

    weak = press(client, link, password="12345678")

    assert weak.status_code == 400
    assert b'name="password"' in weak.content
    assert press(client, link, password=NEW_PASSWORD).status_code == 302


# --- No pre-hijacking on the link path ------------------------------------------------------


def test_a_strangers_sign_up_verified_through_the_link_keeps_no_password(api, client):
    """A stranger signs up for the owner's address; the owner opens the mailed link from
    elsewhere: signed in, with no password anyone else chose."""
    sign_up(api, ip="198.51.100.66", password="the stranger's passphrase")

    pressed = press(client, last_link(), ip=OWNER_IP)

    assert pressed["Location"] == "/dashboard/account"
    user = User.objects.get(email=EMAIL)
    assert user.is_verified and not user.has_usable_password()
    body = {"email": EMAIL, "password": "the stranger's passphrase"}
    stranger = api.post("/api/auth/login", body, format="json")
    assert stranger.status_code == 401


def test_sign_ups_that_disagree_keep_no_password_through_the_link(api, client, clock):
    sign_up(api)
    clock.advance(seconds=61)
    sign_up(api, ip=OWNER_IP, password="a different passphrase")

    press(client, last_link())

    assert not User.objects.get(email=EMAIL).has_usable_password()


def test_the_page_takes_at_most_the_unauthenticated_pages_rate(client, settings):
    """Like every page before sign-in: AUTH_REQUESTS_PER_MINUTE a client address."""
    settings.AUTH_REQUESTS_PER_MINUTE = 3
    path = "/dashboard/confirm/" + "B" * 43
    statuses = [client.get(path, **at("192.0.2.30")).status_code for _ in range(4)]

    assert statuses == [404, 404, 404, 429]
    assert client.get(path, **at("192.0.2.31")).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_a_burst_of_parallel_guesses_gets_no_more_than_twenty():
    """Each try is counted before it is checked: forty at once from forty addresses, and still
    only twenty get past the cap. (On the embedded SQLite some of those twenty may meet a busy
    database and answer 503; they were counted all the same.)"""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    from tests.conftest import CommitClient

    def guess(n: int) -> int:
        try:
            body = {"email": EMAIL, "code": "000000", "password": NEW_PASSWORD}
            return CommitClient().post("/api/auth/reset-password", body, format="json",
                                       **at(f"2001:db8:{n}::1")).status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(guess, range(40)))

    assert statuses.count(429) == 20
    assert set(statuses) - {429} <= {400, 503}
