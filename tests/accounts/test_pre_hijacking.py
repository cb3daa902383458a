"""No pre-hijacking, in either order (contract, "Account security"): whoever verifies an address
ends up in an account that no password chosen by someone else opens."""

import pytest
from django.core import mail

from accounts.models import SignUpAttempt, User
from tests.conftest import CommitBrowserClient, last_code

SIGNUP = "/api/auth/signup"
VERIFY = "/api/auth/verify-email"
LOGIN = "/api/auth/login"
TOKEN = "/api/auth/token"
CHANGE = "/api/auth/change-password"
EMAIL = "victim@example.com"
OWNER = "owners-own-passphrase"
ATTACKER = "attacker-chosen-passphrase"


def sign_up(api, password, ip="127.0.0.1"):
    return api.post(SIGNUP, {"email": EMAIL, "password": password}, format="json",
                    REMOTE_ADDR=ip)


def verify(api, code):
    return api.post(VERIFY, {"email": EMAIL, "code": code}, format="json")


def login(api, password, path=LOGIN):
    return api.post(path, {"email": EMAIL, "password": password}, format="json")


@pytest.fixture
def held_back(monkeypatch):
    """Sign-ups answered while the worker has not run their background work yet."""
    held = []

    def hold():
        monkeypatch.setattr("accounts.tasks.enqueue", lambda task, *args: held.append(args))

    return hold


@pytest.mark.parametrize("first", [ATTACKER, OWNER], ids=["attacker-first", "owner-first"])
@pytest.mark.parametrize("gap", [5, 61], ids=["inside-send-window", "outside-send-window"])
def test_different_passwords_leave_the_verifier_with_no_usable_password(api, clock, first, gap):
    second = OWNER if first == ATTACKER else ATTACKER
    assert sign_up(api, first, ip="198.51.100.1").status_code == 201
    clock.advance(seconds=gap)
    assert sign_up(api, second, ip="203.0.113.9").status_code == 201

    verified = verify(api, last_code(EMAIL))  # the owner holds the inbox

    assert verified.status_code == 200
    assert verified.json()["user"]["isVerified"] is True
    assert "ff_token" in verified.cookies
    assert login(api, ATTACKER).status_code == 401
    assert login(api, OWNER).status_code == 401
    assert not User.objects.get(email=EMAIL).has_usable_password()


@pytest.mark.parametrize("pending", ["attacker", "owner"])
def test_a_sign_up_whose_background_work_has_not_run_still_counts(api, held_back, pending):
    """Every sign-up answered before a verification request counts."""
    if pending == "attacker":
        sign_up(api, OWNER)
        held_back()
        assert sign_up(api, ATTACKER).status_code == 201
    else:
        sign_up(api, ATTACKER)
        held_back()
        assert sign_up(api, OWNER).status_code == 201

    assert verify(api, last_code(EMAIL)).status_code == 200
    assert login(api, ATTACKER).status_code == 401
    assert login(api, OWNER).status_code == 401


def test_the_same_password_twice_is_kept(api, clock):
    sign_up(api, OWNER)
    clock.advance(seconds=61)
    sign_up(api, OWNER)

    assert verify(api, last_code(EMAIL)).status_code == 200
    assert login(api, OWNER).status_code == 200
    assert not SignUpAttempt.objects.exists()


def test_a_sign_up_after_verification_changes_nothing(api):
    sign_up(api, OWNER)
    verify(api, last_code(EMAIL))
    mail.outbox.clear()

    assert sign_up(api, ATTACKER).status_code == 201

    assert mail.outbox == []
    assert login(api, OWNER).status_code == 200
    assert login(api, ATTACKER).status_code == 403  # as for a pending sign-up; never a way in
    assert login(api, ATTACKER, path=TOKEN).status_code == 403


@pytest.mark.parametrize("path", [LOGIN, TOKEN])
@pytest.mark.parametrize("worker", ["done", "not-run-yet"])
def test_signing_up_then_in_tells_no_verified_account_from_a_new_one(api, held_back, path,
                                                                      worker):
    """Sign up an address with a password, then sign in with it: the same answer whether
    the address had a verified account or none."""
    User.objects.create_user(email="known@example.com", password=OWNER, is_verified=True)
    if worker == "not-run-yet":
        held_back()
    answers = []
    for address in ("known@example.com", "unknown@example.com"):
        api.post(SIGNUP, {"email": address, "password": ATTACKER}, format="json")
        answer = api.post(path, {"email": address, "password": ATTACKER}, format="json")
        answers.append((answer.status_code, answer.json()))

    assert answers[0] == answers[1]
    assert answers[0][0] == 403
    assert api.post(path, {"email": "known@example.com", "password": OWNER},
                    format="json").status_code == 200


def test_signing_up_again_with_one_password_keeps_one_record(api, clock):
    sign_up(api, OWNER)
    verify(api, last_code(EMAIL))
    for _ in range(3):
        clock.advance(seconds=61)
        sign_up(api, ATTACKER)

    assert SignUpAttempt.objects.filter(email=EMAIL).count() == 1


def test_the_verifier_sets_a_password_without_a_current_one(api, clock):
    sign_up(api, ATTACKER)
    sign_up(api, OWNER)
    verify(api, last_code(EMAIL))  # the cookie of the fresh session stays on the client

    changed = api.post(CHANGE, {"newPassword": "the-owners-new-passphrase"}, format="json")

    assert changed.status_code == 200
    assert login(api, "the-owners-new-passphrase").status_code == 200
    assert login(api, ATTACKER).status_code == 401


def test_a_usable_password_still_needs_the_current_one(owner_api):
    changed = owner_api.post(CHANGE, {"newPassword": "the-owners-new-passphrase"},
                             format="json")

    assert changed.status_code == 400
    assert changed.json()["error"] == "validation_error"
    assert list(changed.json()["details"]) == ["currentPassword"]


def test_the_dashboard_says_the_account_has_no_password_yet(api, db):
    sign_up(api, ATTACKER)
    sign_up(api, OWNER)
    browser = CommitBrowserClient()

    verified = browser.post("/dashboard/verify", {"email": EMAIL, "code": last_code(EMAIL)})

    assert verified.status_code == 302
    assert verified["Location"] == "/dashboard/account"
    page = browser.get("/dashboard/account")
    assert "no password yet" in page.content.decode()
    assert 'name="currentPassword"' not in page.content.decode()
    set_one = browser.post("/dashboard/account/password",
                           {"newPassword": "the-owners-new-passphrase"})
    assert set_one.status_code == 302
    assert login(api, "the-owners-new-passphrase").status_code == 200


@pytest.mark.parametrize("path", [LOGIN, TOKEN])
def test_sign_in_right_after_sign_up_is_403_before_the_background_work(api, held_back, path):
    held_back()
    assert sign_up(api, OWNER).status_code == 201
    assert not User.objects.filter(email=EMAIL).exists()

    pending = login(api, OWNER, path)
    wrong = login(api, "not-the-passphrase", path)

    assert pending.status_code == 403
    assert pending.json()["error"] == "email_not_verified"
    assert wrong.status_code == 401


def test_sign_in_with_the_second_sign_ups_password_is_403_too(api):
    sign_up(api, ATTACKER)
    sign_up(api, OWNER)

    assert login(api, OWNER).status_code == 403
    assert login(api, ATTACKER).status_code == 403


def test_a_strangers_lone_sign_up_verified_from_elsewhere_keeps_no_password(api):
    """The owner enters the code a stranger's sign-up sent to their inbox: the stranger's
    password must not open the account the owner now holds."""
    assert sign_up(api, ATTACKER, ip="198.51.100.1").status_code == 201

    verified = api.post(VERIFY, {"email": EMAIL, "code": last_code(EMAIL)}, format="json",
                        REMOTE_ADDR="203.0.113.9")

    assert verified.status_code == 200
    assert "ff_token" in verified.cookies
    assert login(api, ATTACKER).status_code == 401
    assert login(api, ATTACKER, path=TOKEN).status_code == 401
    assert not User.objects.get(email=EMAIL).has_usable_password()


def test_a_sign_up_verified_from_its_own_address_keeps_its_password(api):
    assert sign_up(api, OWNER, ip="203.0.113.9").status_code == 201

    verified = api.post(VERIFY, {"email": EMAIL, "code": last_code(EMAIL)}, format="json",
                        REMOTE_ADDR="203.0.113.9")

    assert verified.status_code == 200
    assert login(api, OWNER).status_code == 200


def test_a_month_old_strangers_sign_up_still_keeps_no_password(api, clock):
    """The nightly purge forgets old sign-ups; an account still waiting for verification keeps
    its record, so a stranger who waits it out gains nothing."""
    from accounts.services import sign_up_attempts_purge

    assert sign_up(api, ATTACKER, ip="198.51.100.1").status_code == 201
    clock.advance(days=31)
    sign_up_attempts_purge()
    api.post("/api/auth/resend-otp", {"email": EMAIL}, format="json", REMOTE_ADDR="198.51.100.1")

    verified = api.post(VERIFY, {"email": EMAIL, "code": last_code(EMAIL)}, format="json",
                        REMOTE_ADDR="203.0.113.9")

    assert verified.status_code == 200
    assert login(api, ATTACKER).status_code == 401
    assert not User.objects.get(email=EMAIL).has_usable_password()


def test_an_unverified_account_with_no_sign_up_on_record_keeps_no_password(api, db):
    User.objects.create_user(email=EMAIL, password=ATTACKER, is_verified=False)
    api.post("/api/auth/resend-otp", {"email": EMAIL}, format="json")

    assert verify(api, last_code(EMAIL)).status_code == 200
    assert login(api, ATTACKER).status_code == 401


def test_the_purge_forgets_old_sign_ups_of_addresses_with_no_account_only(api, clock):
    from accounts.services import sign_up_attempts_purge

    SignUpAttempt.objects.create(email="gone@example.com", password_hash="x")
    SignUpAttempt.objects.create(email=EMAIL, password_hash="x")
    User.objects.create_user(email=EMAIL, password=OWNER, is_verified=True)
    clock.advance(days=31)

    assert sign_up_attempts_purge() == 1
    assert SignUpAttempt.objects.get().email == EMAIL
