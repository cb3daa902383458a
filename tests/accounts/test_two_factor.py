"""Two-step sign-in (contract, "Account security"): TOTP (RFC 6238) and recovery codes."""

import time

import pyotp
import pytest

from accounts.models import TwoFactor
from tests.conftest import PASSWORD, CommitClient, bearer

SETUP = "/api/auth/2fa/setup"
ENABLE = "/api/auth/2fa/enable"
DISABLE = "/api/auth/2fa/disable"
LOGIN = "/api/auth/login"
TOKEN = "/api/auth/token"
ME = "/api/auth/me"


def code_at(secret: str, steps_ahead: int = 0) -> str:
    return pyotp.TOTP(secret).at(time.time() + 30 * steps_ahead)


def sign_in(path=LOGIN, otp=None, email="owner@example.com", ip="203.0.113.1"):
    body = {"email": email, "password": PASSWORD}
    if otp is not None:
        body["otp"] = otp
    return CommitClient().post(path, body, format="json", REMOTE_ADDR=ip)


@pytest.fixture
def enabled(owner_api):
    """Two-step sign-in turned on: (secret, recovery codes)."""
    secret = owner_api.post(SETUP).json()["secret"]
    response = owner_api.post(ENABLE, {"code": code_at(secret)}, format="json")
    assert response.status_code == 200
    return secret, response.json()["recoveryCodes"]


def test_setup_gives_a_secret_and_an_otpauth_uri(owner_api, user):
    response = owner_api.post(SETUP)

    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"secret", "otpauthUri"}
    assert body["otpauthUri"].startswith("otpauth://totp/FormFlow:owner%40example.com?")
    assert f"secret={body['secret']}" in body["otpauthUri"]
    assert response["Cache-Control"] == "no-store"
    assert sign_in().status_code == 200  # not on until a code confirms it


def test_enable_gives_ten_recovery_codes(enabled):
    _, codes = enabled

    assert len(codes) == 10
    assert len(set(codes)) == 10


def test_a_wrong_code_at_enable_is_400_invalid_otp(owner_api):
    owner_api.post(SETUP)

    response = owner_api.post(ENABLE, {"code": "000000"}, format="json")

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_otp"
    assert not TwoFactor.objects.filter(enabled=True).exists()


@pytest.mark.parametrize("path", [LOGIN, TOKEN])
def test_sign_in_without_otp_is_401_otp_required(enabled, path):
    response = sign_in(path)

    assert response.status_code == 401
    assert response.json()["error"] == "otp_required"


@pytest.mark.parametrize("path", [LOGIN, TOKEN])
def test_sign_in_with_a_wrong_otp_is_401_invalid_otp(enabled, path):
    response = sign_in(path, otp="000000" if code_at(enabled[0], 1) != "000000" else "111111")

    assert response.status_code == 401
    assert response.json()["error"] == "invalid_otp"


@pytest.mark.parametrize("path", [LOGIN, TOKEN])
def test_sign_in_with_a_current_code(enabled, path):
    assert sign_in(path, otp=code_at(enabled[0], 1)).status_code == 200


def test_a_code_is_accepted_once(enabled):
    code = code_at(enabled[0], 1)
    assert sign_in(otp=code).status_code == 200

    replay = sign_in(otp=code)

    assert replay.status_code == 401
    assert replay.json()["error"] == "invalid_otp"


def test_the_code_that_enabled_it_cannot_sign_in(enabled):
    assert sign_in(otp=code_at(enabled[0])).json()["error"] == "invalid_otp"


def test_a_recovery_code_works_once(enabled):
    _, codes = enabled

    assert sign_in(otp=codes[0]).status_code == 200
    assert sign_in(otp=codes[0]).json()["error"] == "invalid_otp"
    assert sign_in(otp=codes[1]).status_code == 200


def test_wrong_otps_count_as_failed_sign_ins(enabled):
    for _ in range(10):
        assert sign_in(otp="999999x", ip="198.51.100.7").status_code == 401

    assert sign_in(otp=code_at(enabled[0], 1), ip="198.51.100.7").status_code == 429


def test_enabling_revokes_every_other_token_and_gives_a_fresh_cookie(owner_api, user):
    other_session = CommitClient()
    other_session.credentials(HTTP_AUTHORIZATION=bearer(user))
    secret = owner_api.post(SETUP).json()["secret"]

    response = owner_api.post(ENABLE, {"code": code_at(secret)}, format="json")

    assert other_session.get(ME).status_code == 401
    assert owner_api.get(ME).status_code == 401  # the bearer it called with is revoked too
    fresh = CommitClient()
    fresh.cookies["ff_token"] = response.cookies["ff_token"].value
    assert fresh.get(ME).status_code == 200


def test_disable_needs_password_and_code_and_revokes_other_tokens(enabled, user):
    secret, _ = enabled
    user.refresh_from_db()  # enabling revoked the tokens of the version it had
    session = CommitClient()
    session.credentials(HTTP_AUTHORIZATION=bearer(user))
    other_session = CommitClient()
    other_session.credentials(HTTP_AUTHORIZATION=bearer(user))

    wrong_password = session.post(DISABLE, {"password": "nope-nope-nope", "code": "1"},
                                  format="json")
    wrong_code = session.post(DISABLE, {"password": PASSWORD, "code": "000000x"},
                              format="json")
    done = session.post(DISABLE, {"password": PASSWORD, "code": code_at(secret, 1)},
                        format="json")

    assert wrong_password.status_code == 400
    assert list(wrong_password.json()["details"]) == ["password"]
    assert wrong_code.status_code == 400
    assert wrong_code.json()["error"] == "invalid_otp"
    assert done.status_code == 200
    assert set(done.json()) == {"message"}
    assert "ff_token" in done.cookies
    assert other_session.get(ME).status_code == 401
    assert sign_in().status_code == 200


@pytest.mark.parametrize("path", [SETUP, ENABLE, DISABLE])
def test_two_factor_endpoints_need_authentication(api, db, path):
    assert api.post(path, {}, format="json").status_code == 401


def test_wrong_guesses_at_disable_are_limited_like_sign_ins(user):
    """A stolen session cannot guess the password, then the codes, at disable without limit."""
    from tests.conftest import turn_on_two_factor

    turn_on_two_factor(user)
    thief = CommitClient()
    thief.credentials(HTTP_AUTHORIZATION=bearer(user.__class__.objects.get(pk=user.pk)))
    answers = [
        thief.post("/api/auth/2fa/disable", {"password": f"guess-{n}", "code": "000000"},
                   format="json", REMOTE_ADDR="198.51.100.7").status_code
        for n in range(12)
    ]

    assert answers[:10] == [400] * 10
    assert answers[10:] == [429, 429]
    assert TwoFactor.objects.get().enabled


def test_log_out_everywhere_ends_admin_sessions_too(db):
    from accounts.models import User
    from tests.conftest import CommitBrowserClient, next_code, turn_on_two_factor

    staff = User.objects.create_superuser("admin@example.com", PASSWORD)
    secret, _ = turn_on_two_factor(staff)
    browser = CommitBrowserClient()
    browser.post("/admin/login/", {"username": staff.email, "password": PASSWORD,
                                   "otp": next_code(secret), "next": "/admin/"})
    assert browser.get("/admin/").status_code == 200
    api = CommitClient()
    api.credentials(HTTP_AUTHORIZATION=bearer(User.objects.get(pk=staff.pk)))

    assert api.post("/api/auth/logout-all").status_code == 200
    assert browser.get("/admin/").status_code == 302  # back to the sign-in page


@pytest.mark.parametrize("code", ["١٢٣٤٥٦", "12345é", "☃"])
def test_a_code_that_is_not_ascii_digits_is_simply_wrong(owner_api, code):
    owner_api.post("/api/auth/2fa/setup")

    response = owner_api.post("/api/auth/2fa/enable", {"code": code}, format="json")

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_otp"
