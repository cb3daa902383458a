"""Emailed codes and wrong tries per client (contract, "Account security"): nobody else's
wrong codes ever stop an owner from verifying or resetting, and strangers' guesses stay
bounded."""

import pytest

from accounts.models import User
from tests.conftest import PASSWORD, CommitClient, last_code, make_user

EMAIL = "owner@example.com"
OWNER_IP = "203.0.113.5"
NEW_PASSWORD = "another long passphrase"


def wrong(code: str) -> str:
    return "000000" if code != "000000" else "111111"


def sign_up(api):
    api.post("/api/auth/signup", {"email": EMAIL, "password": PASSWORD}, format="json",
             REMOTE_ADDR=OWNER_IP)
    return last_code(EMAIL)


def verify(client, code, ip):
    return client.post("/api/auth/verify-email", {"email": EMAIL, "code": code}, format="json",
                       REMOTE_ADDR=ip)


def forgot(api, ip=OWNER_IP):
    api.post("/api/auth/forgot-password", {"email": EMAIL}, format="json", REMOTE_ADDR=ip)
    return last_code(EMAIL)


def reset(client, code, ip):
    body = {"email": EMAIL, "code": code, "password": NEW_PASSWORD}
    return client.post("/api/auth/reset-password", body, format="json", REMOTE_ADDR=ip)


def test_five_wrong_tries_from_one_client_kill_the_code_for_that_client_only(api):
    code = sign_up(api)
    for _ in range(5):
        assert verify(api, wrong(code), "198.51.100.1").status_code == 400

    assert verify(api, code, "198.51.100.1").json()["error"] == "invalid_code"
    assert verify(api, code, OWNER_IP).status_code == 200


def test_the_askers_own_five_wrong_tries_kill_the_code(api):
    code = sign_up(api)
    for _ in range(5):
        verify(api, wrong(code), OWNER_IP)

    assert verify(api, code, OWNER_IP).status_code == 400
    assert not User.objects.get(email=EMAIL).is_verified


def strangers_guess(api, code, send, tries=20):
    for n in range(tries):
        assert send(api, wrong(code), f"198.51.100.{n // 4}").status_code == 400


def test_past_twenty_strangers_tries_they_get_429_and_the_asker_still_verifies(api):
    code = sign_up(api)
    strangers_guess(api, code, verify)

    refused = verify(api, code, "198.51.100.200")

    assert refused.status_code == 429
    assert refused.json()["error"] == "too_many_attempts"
    assert 0 < int(refused["Retry-After"]) <= 86400
    assert verify(api, code, OWNER_IP).status_code == 200


def test_past_twenty_strangers_tries_the_asker_still_resets(api, db):
    make_user(EMAIL)
    code = forgot(api)
    strangers_guess(api, code, reset)

    assert reset(api, code, "198.51.100.200").status_code == 429
    assert reset(api, code, OWNER_IP).status_code == 200
    assert User.objects.get(email=EMAIL).check_password(NEW_PASSWORD)


def test_a_client_with_the_device_cookie_may_still_reset(api, db):
    make_user(EMAIL)
    on_device = CommitClient()
    signed_in = on_device.post("/api/auth/login", {"email": EMAIL, "password": PASSWORD},
                               format="json", REMOTE_ADDR="192.0.2.9")
    assert signed_in.status_code == 200
    code = forgot(api, ip="198.51.100.250")  # asked from somewhere else
    strangers_guess(api, code, reset)

    assert reset(on_device, code, "192.0.2.10").status_code == 200


def test_the_askers_wrong_tries_do_not_use_up_the_strangers_allowance(api):
    code = sign_up(api)
    for _ in range(4):
        verify(api, wrong(code), OWNER_IP)
    strangers_guess(api, code, verify, tries=19)

    assert verify(api, wrong(code), "198.51.100.201").status_code == 400
    assert verify(api, code, "198.51.100.202").status_code == 429


@pytest.mark.parametrize("purpose", ["verify", "reset"])
def test_a_stranger_with_no_live_code_to_guess_never_blocks_the_owner(api, db, purpose):
    """Twenty wrong codes for an address that has no live code yet."""
    if purpose == "reset":
        make_user(EMAIL)
    for n in range(21):
        send = verify if purpose == "verify" else reset
        send(api, "123456", f"198.51.100.{n}")

    code = sign_up(api) if purpose == "verify" else forgot(api)
    send = verify if purpose == "verify" else reset
    assert send(api, code, OWNER_IP).status_code == 200


ATTACKER_IP = "198.51.100.77"


def test_a_stranger_who_asked_for_the_code_first_cannot_lock_the_owner_out(api, clock):
    """The stranger's resend sends the code the owner's inbox then holds; their friends spend
    the 20 strangers' tries. The owner asks too (nothing is sent inside 60 s) and verifies."""
    sign_up(api)
    clock.advance(seconds=61)
    api.post("/api/auth/resend-otp", {"email": EMAIL}, format="json", REMOTE_ADDR=ATTACKER_IP)
    code = last_code(EMAIL)
    for n in range(20):
        assert verify(api, wrong(code), f"192.0.2.{n // 4}").status_code == 400
    assert verify(api, wrong(code), "192.0.2.99").status_code == 429

    api.post("/api/auth/resend-otp", {"email": EMAIL}, format="json", REMOTE_ADDR=OWNER_IP)
    assert last_code(EMAIL) == code  # nothing new was sent

    assert verify(api, code, OWNER_IP).status_code == 200
    assert User.objects.get(email=EMAIL).is_verified


def test_a_stranger_who_asked_for_a_reset_first_cannot_block_the_owners_reset(api, db):
    make_user(EMAIL)
    forgot(api, ip=ATTACKER_IP)
    code = last_code(EMAIL)
    for n in range(20):
        reset(api, wrong(code), f"192.0.2.{n // 4}")

    forgot(api)  # the owner asks too: inside 60 s nothing is sent, the inbox holds the code

    assert reset(api, code, OWNER_IP).status_code == 200


def v6(n: int) -> str:
    """A client in a /64 of its own: cheap for an attacker to hold thousands of."""
    return f"2001:db8:{n // 65536:x}:{n % 65536:x}::1"


def test_fifty_clients_that_asked_get_no_more_guesses_than_strangers_plus_a_share(api, db):
    """Each client that asks while the code is fresh sends nothing: asking buys a share of 5
    wrong tries an hour among all of them past the 20 a day, never 5 each."""
    make_user(EMAIL)
    code = forgot(api)  # the owner asked: theirs is the code in the inbox
    answered = 0
    for n in range(50):
        forgot(api, ip=v6(n))
        for _ in range(5):
            status = reset(api, wrong(code), v6(n)).status_code
            assert status in (400, 429)
            answered += status == 400

    assert answered == 20 + 5
    assert reset(api, code, OWNER_IP).status_code == 200


def test_clients_that_asked_first_and_strangers_past_the_cap_never_stop_the_owner(api, db):
    make_user(EMAIL)
    for n in range(50):  # the first of them is the code's sender; the rest only asked
        forgot(api, ip=v6(n))
    code = last_code(EMAIL)
    strangers_guess(api, code, reset)
    assert reset(api, wrong(code), "192.0.2.99").status_code == 429

    forgot(api)  # the owner asks too: nothing is sent, the inbox holds the code

    assert reset(api, code, OWNER_IP).status_code == 200


def test_once_every_share_is_spent_the_owner_asks_again_and_resets(api, db, clock):
    make_user(EMAIL)
    forgot(api, ip=ATTACKER_IP)
    code = last_code(EMAIL)
    strangers_guess(api, code, reset)
    for n in range(5):
        forgot(api, ip=v6(n))
        assert reset(api, wrong(code), v6(n)).status_code == 400
    forgot(api, ip=v6(99))
    assert reset(api, wrong(code), v6(99)).status_code == 429

    clock.advance(seconds=61)
    new_code = forgot(api)  # a new code, and the owner is the client that asked for it

    assert reset(api, new_code, OWNER_IP).status_code == 200


def answers_to_a_stranger(api, address):
    """What a stranger who asked for a reset code, and their friends, see for ``address``."""
    def attempt(ip):
        body = {"email": address, "code": "000000", "password": NEW_PASSWORD}
        response = api.post("/api/auth/reset-password", body, format="json", REMOTE_ADDR=ip)
        return response.status_code, response.json()["error"]

    api.post("/api/auth/forgot-password", {"email": address}, format="json",
             REMOTE_ADDR=ATTACKER_IP)
    seen = [attempt(f"192.0.2.{n // 4}") for n in range(21)]
    seen += [attempt(ATTACKER_IP) for _ in range(7)]
    api.post("/api/auth/forgot-password", {"email": address}, format="json",
             REMOTE_ADDR="192.0.2.50")
    seen += [attempt("192.0.2.50") for _ in range(7)]
    return seen


def test_the_answers_tell_no_one_whether_the_address_has_an_account(api, db, monkeypatch):
    monkeypatch.setattr("accounts.codes.new_code", lambda: "123456")
    make_user("known@example.com")

    known = answers_to_a_stranger(api, "known@example.com")
    unknown = answers_to_a_stranger(api, "nobody@example.com")

    assert known == unknown
    assert {status for status, _ in known} == {400, 429}


def test_a_stranger_opening_a_send_window_later_does_not_unseat_the_owner(api, db, clock):
    """The owner's ask sent the code. A stranger asks 55 s later: its ask opens a window of
    its own (the worker sends nothing inside 60 s), and strangers spend the day's tries. The
    owner, who holds the emailed code, still resets."""
    make_user(EMAIL)
    code = forgot(api)
    clock.advance(seconds=55)
    forgot(api, ip=ATTACKER_IP)
    assert last_code(EMAIL) == code
    strangers_guess(api, code, reset)

    assert reset(api, code, OWNER_IP).status_code == 200
