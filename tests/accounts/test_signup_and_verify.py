import pytest
from django.core import mail

from accounts.models import EmailCode, User
from tests.conftest import PASSWORD, last_code, make_user

SIGNUP = "/api/auth/signup"
VERIFY = "/api/auth/verify-email"
RESEND = "/api/auth/resend-otp"


def sign_up(api, email="new@example.com", password=PASSWORD):
    return api.post(SIGNUP, {"email": email, "password": password}, format="json")


def verify(api, code, email="new@example.com", ip="127.0.0.1"):
    return api.post(VERIFY, {"email": email, "code": code}, format="json", REMOTE_ADDR=ip)


def test_signup_creates_unverified_user_and_mails_a_code(api):
    response = sign_up(api)

    assert response.status_code == 201
    assert response.json() == {"message": response.json()["message"]}
    user = User.objects.get(email="new@example.com")
    assert not user.is_verified
    code = last_code("new@example.com")
    assert code not in response.content.decode()
    assert PASSWORD not in response.content.decode()


def test_signup_stores_email_lower_case(api):
    sign_up(api, email="Mixed.Case@Example.COM")

    assert User.objects.filter(email="mixed.case@example.com").exists()
    assert mail.outbox[-1].to == ["mixed.case@example.com"]


def test_code_is_stored_hashed(api):
    sign_up(api)
    code = last_code("new@example.com")
    stored = EmailCode.objects.get(user__email="new@example.com")

    assert code not in stored.code_hash
    assert len(stored.code_hash) == 64


@pytest.mark.parametrize(
    "password",
    ["short1!", "password123", "12345678901", "new@example.com"],
    ids=["too-short", "common", "all-digits", "like-email"],
)
def test_signup_rejects_weak_password(api, password):
    response = sign_up(api, password=password)

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "validation_error"
    assert set(body["details"]) == {"password"}
    assert not User.objects.exists()


def test_signup_rejects_bad_email_and_missing_password(api):
    response = api.post(SIGNUP, {"email": "not-an-email"}, format="json")

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"email", "password"}


def test_signup_requires_json(api):
    response = api.post(SIGNUP, {"email": "a@example.com", "password": PASSWORD})

    assert response.status_code == 415
    assert response.json()["error"] == "unsupported_media_type"


def test_signup_rejects_malformed_json(api):
    response = api.post(SIGNUP, "{not json", content_type="application/json")

    assert response.status_code == 400
    assert response.json()["error"] == "malformed_body"


def test_signup_of_verified_address_answers_like_new_and_sends_nothing(api):
    make_user("taken@example.com")
    fresh = sign_up(api, email="fresh@example.com")
    mail.outbox.clear()

    again = sign_up(api, email="taken@example.com", password="another-long-pass")

    assert again.status_code == fresh.status_code == 201
    assert again.json() == fresh.json()
    assert mail.outbox == []
    assert User.objects.get(email="taken@example.com").check_password(PASSWORD)


def test_signup_again_inside_the_send_window_sends_nothing(api):
    sign_up(api)

    again = sign_up(api)

    assert again.status_code == 201
    assert len(mail.outbox) == 1


def test_signup_again_after_the_window_sends_a_fresh_code(api, clock):
    sign_up(api)
    first = last_code("new@example.com")
    clock.advance(seconds=61)

    assert sign_up(api).status_code == 201
    second = last_code("new@example.com")

    assert len(mail.outbox) == 2
    if first != second:
        assert verify(api, first).status_code == 400
    assert verify(api, second).status_code == 200


def test_at_most_five_codes_an_hour_reach_one_address(api, clock):
    sign_up(api)
    for _ in range(8):
        clock.advance(seconds=61)
        sign_up(api)
        api.post("/api/auth/resend-otp", {"email": "new@example.com"}, format="json")

    assert len(mail.outbox) == 5
    clock.advance(minutes=60)
    sign_up(api)
    assert len(mail.outbox) == 6


def test_twenty_wrong_codes_a_day_then_429_even_with_fresh_codes(api, clock):
    """Guesses from many addresses, each with fresh codes: the address's daily limit holds."""
    sign_up(api)
    wrong = 0
    for round_ in range(5):  # fresh codes reset each code's own 5 tries, never the daily limit
        clock.advance(minutes=13)
        sign_up(api)
        wrong_code = "000000" if last_code("new@example.com") != "000000" else "111111"
        for n in range(4):
            assert verify(api, wrong_code, ip=f"198.51.100.{round_ * 4 + n}").status_code == 400
            wrong += 1

    blocked = verify(api, last_code("new@example.com"), ip="203.0.113.9")

    assert wrong == 20
    assert blocked.status_code == 429
    assert blocked.json()["error"] == "too_many_attempts"
    assert 0 < int(blocked["Retry-After"]) <= 86400 + 900  # 24 h, in quarter hours
    assert not User.objects.get(email="new@example.com").is_verified


def test_verify_with_right_code_returns_user_and_sets_cookie(api):
    sign_up(api)
    code = last_code("new@example.com")

    response = verify(api, code)

    assert response.status_code == 200
    user = User.objects.get(email="new@example.com")
    assert response.json() == {
        "user": {
            "_id": str(user.pk),
            "email": "new@example.com",
            "isVerified": True,
            "onboardingComplete": False,
        }
    }
    assert user.is_verified
    assert response.cookies["ff_token"].value
    assert code not in response.content.decode()


def test_verified_cookie_authenticates(api):
    sign_up(api)
    verify(api, last_code("new@example.com"))

    response = api.get("/api/auth/me")

    assert response.status_code == 200
    assert response.json()["user"]["email"] == "new@example.com"


def test_verify_with_wrong_code_is_invalid_code(api):
    sign_up(api)
    code = last_code("new@example.com")
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"

    response = verify(api, wrong)

    assert response.status_code == 400
    assert response.json() == {"error": "invalid_code", "message": response.json()["message"]}
    assert not User.objects.get(email="new@example.com").is_verified


def test_verify_unknown_email_is_invalid_code(api):
    response = verify(api, "123456", email="nobody@example.com")

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_code"


@pytest.mark.parametrize("code", ["12ab", "1234567", "12345"])
def test_malformed_code_is_a_wrong_code(api, code):
    sign_up(api)

    response = verify(api, code)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_code"
    assert EmailCode.objects.get().wrong_try_count() == 1


def test_verify_requires_email_and_code(api):
    response = api.post(VERIFY, {}, format="json")

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"email", "code"}


def test_code_works_until_thirty_minutes(api, clock):
    sign_up(api)
    clock.advance(minutes=29, seconds=59)

    assert verify(api, last_code("new@example.com")).status_code == 200


def test_code_expires_after_thirty_minutes(api, clock):
    sign_up(api)
    clock.advance(minutes=30, seconds=1)

    response = verify(api, last_code("new@example.com"))

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_code"


def test_five_wrong_tries_kill_the_code(api):
    sign_up(api)
    code = last_code("new@example.com")
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    for _ in range(5):
        assert verify(api, wrong).status_code == 400

    assert verify(api, code).status_code == 400
    assert not User.objects.get(email="new@example.com").is_verified


def test_resend_after_dead_code_gives_working_code(api, clock):
    sign_up(api)
    code = last_code("new@example.com")
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    for _ in range(5):
        verify(api, wrong)
    clock.advance(seconds=61)

    api.post(RESEND, {"email": "new@example.com"}, format="json")

    assert verify(api, last_code("new@example.com")).status_code == 200


def test_resend_replaces_the_previous_code(api, clock):
    sign_up(api)
    old = EmailCode.objects.get().code_hash
    clock.advance(seconds=61)

    response = api.post(RESEND, {"email": "new@example.com"}, format="json")

    assert response.status_code == 200
    assert len(mail.outbox) == 2
    assert EmailCode.objects.get().code_hash != old
    assert EmailCode.objects.count() == 1


def test_resend_is_throttled_to_one_send_a_minute(api, clock):
    sign_up(api)
    clock.advance(seconds=30)

    response = api.post(RESEND, {"email": "new@example.com"}, format="json")

    assert response.status_code == 200
    assert len(mail.outbox) == 1


@pytest.mark.parametrize("email", ["nobody@example.com", "owner@example.com"])
def test_resend_answers_the_same_for_unknown_and_verified(api, user, email):
    sign_up(api)
    expected = api.post(RESEND, {"email": "new@example.com"}, format="json").json()
    mail.outbox.clear()

    response = api.post(RESEND, {"email": email}, format="json")

    assert response.status_code == 200
    assert response.json() == expected
    assert mail.outbox == []


def test_resend_validates_email(api):
    response = api.post(RESEND, {"email": "nope"}, format="json")

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"email"}
