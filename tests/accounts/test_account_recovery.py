"""Forgot and reset password, change password, log out everywhere, and operators revoking tokens
(contract, "Account security")."""

import re

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import EmailCode, User
from accounts.services import token_for
from tests.conftest import PASSWORD, CommitClient, last_code, make_user

FORGOT = "/api/auth/forgot-password"
RESET = "/api/auth/reset-password"
CHANGE = "/api/auth/change-password"
LOGOUT_ALL = "/api/auth/logout-all"
ME = "/api/auth/me"
NEW_PASSWORD = "another long passphrase"


def forgot(api, email="owner@example.com"):
    return api.post(FORGOT, {"email": email}, format="json")


def reset(api, code, password=NEW_PASSWORD, email="owner@example.com", ip="127.0.0.1"):
    body = {"email": email, "code": code, "password": password}
    return api.post(RESET, body, format="json", REMOTE_ADDR=ip)


def me_with(token) -> int:
    client = CommitClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client.get(ME).status_code


def login(api, password, email="owner@example.com"):
    return api.post("/api/auth/login", {"email": email, "password": password}, format="json")


# --- forgot-password -------------------------------------------------------------------------


def test_forgot_password_mails_a_reset_code_to_an_existing_account(api, user):
    response = forgot(api)

    assert response.status_code == 200
    assert set(response.json()) == {"message"}
    assert "reset" in mail.outbox[-1].subject.lower()
    assert last_code(user.email) not in response.content.decode()


def test_forgot_password_answers_the_same_for_an_unknown_address(api, user):
    known = forgot(api)
    unknown = forgot(api, "nobody@example.com")

    assert unknown.status_code == known.status_code == 200
    assert unknown.json() == known.json()
    assert [m.to for m in mail.outbox] == [[user.email]]


def test_forgot_password_respects_the_send_window(api, user, clock):
    forgot(api)
    forgot(api)
    assert len(mail.outbox) == 1

    clock.advance(seconds=61)
    forgot(api)
    assert len(mail.outbox) == 2


def test_forgot_password_sends_at_most_five_codes_an_hour(api, user, clock):
    for _ in range(7):
        forgot(api)
        clock.advance(seconds=61)

    assert len(mail.outbox) == 5


def test_forgot_password_rejects_a_number_for_the_email(api, user):
    response = api.post(FORGOT, {"email": 12}, format="json")

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"email"}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (FORGOT, {"email": "{email}"}),
        ("/api/auth/resend-otp", {"email": "{email}"}),
        ("/api/auth/signup", {"email": "{email}", "password": PASSWORD}),
    ],
    ids=["forgot", "resend", "signup"],
)
def test_account_requests_do_the_same_work_whether_or_not_the_address_exists(
    api, path, body, monkeypatch
):
    """Answering in equal time: the request itself touches nothing that depends on the address;
    the lookup runs in the worker."""
    make_user("known@example.com", verified=False)
    queued = []
    monkeypatch.setattr("accounts.tasks.enqueue", lambda task, *args: queued.append(task.name))

    def run(email):
        payload = {key: value.format(email=email) for key, value in body.items()}
        with CaptureQueriesContext(connection) as queries:
            response = api.post(path, payload, format="json")
        # The statements, their values aside (sign-up records itself whatever the address).
        return response, [re.sub(r"'[^']*'", "?", q["sql"]) for q in queries]

    known, known_sql = run("known@example.com")
    unknown, unknown_sql = run("unknown@example.com")

    assert known.status_code == unknown.status_code
    assert known.json() == unknown.json()
    assert known_sql == unknown_sql
    assert not any("accounts_user" in sql for sql in known_sql)
    assert len(queued) == 2 and queued[0] == queued[1]


# --- reset-password --------------------------------------------------------------------------


def test_reset_password_sets_the_password_and_revokes_older_tokens(api, user):
    old_token = token_for(user)
    forgot(api)

    response = reset(api, last_code(user.email))

    assert response.status_code == 200
    assert set(response.json()) == {"message"}
    assert me_with(old_token) == 401
    assert login(api, PASSWORD).status_code == 401
    assert login(api, NEW_PASSWORD).status_code == 200


def test_reset_password_marks_an_unverified_address_verified(api):
    user = make_user("pending@example.com", verified=False)
    forgot(api, user.email)

    response = reset(api, last_code(user.email), email=user.email)

    assert response.status_code == 200
    user.refresh_from_db()
    assert user.is_verified
    assert login(api, NEW_PASSWORD, email=user.email).status_code == 200


def test_reset_code_is_single_use(api, user):
    forgot(api)
    code = last_code(user.email)
    assert reset(api, code).status_code == 200

    again = reset(api, code, password="a third long passphrase")

    assert again.status_code == 400
    assert again.json()["error"] == "invalid_code"
    assert login(api, NEW_PASSWORD).status_code == 200


def test_wrong_or_expired_reset_code_changes_nothing(api, user, clock):
    forgot(api)
    code = last_code(user.email)
    wrong = "000000" if code != "000000" else "111111"

    assert reset(api, wrong).json()["error"] == "invalid_code"
    clock.advance(minutes=31)
    expired = reset(api, code)

    assert expired.status_code == 400
    assert expired.json()["error"] == "invalid_code"
    assert login(api, PASSWORD).status_code == 200


def test_reset_code_dies_after_five_wrong_tries(api, user):
    forgot(api)
    code = last_code(user.email)
    wrong = "000000" if code != "000000" else "111111"
    for _ in range(5):
        reset(api, wrong)

    response = reset(api, code)

    assert response.status_code == 400
    assert login(api, PASSWORD).status_code == 200


def test_reset_rejects_a_weak_password_and_keeps_the_code(api, user):
    forgot(api)
    code = last_code(user.email)

    weak = reset(api, code, password="12345678901")

    assert weak.status_code == 400
    assert set(weak.json()["details"]) == {"password"}
    assert reset(api, code).status_code == 200


def test_a_verification_code_does_not_reset_a_password(api):
    api.post("/api/auth/signup", {"email": "new@example.com", "password": PASSWORD}, format="json")
    verification = last_code("new@example.com")

    response = reset(api, verification, email="new@example.com")

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_code"


def test_a_reset_code_does_not_verify_an_address(api):
    user = make_user("pending@example.com", verified=False)
    forgot(api, user.email)
    code = last_code(user.email)

    response = api.post(
        "/api/auth/verify-email", {"email": user.email, "code": code}, format="json"
    )

    assert response.status_code == 400
    user.refresh_from_db()
    assert not user.is_verified


def test_wrong_reset_codes_count_toward_the_daily_limit(api, user, settings):
    wrong = "999999"
    forgot(api)
    if last_code(user.email) == wrong:
        wrong = "999998"
    # From many client addresses: the limit is the address's, not the caller's.
    statuses = [reset(api, wrong, ip=f"198.51.100.{n}").status_code for n in range(21)]

    assert statuses[:20] == [400] * 20
    assert statuses[20] == 429
    assert reset(api, wrong, ip="203.0.113.9").json()["error"] == "too_many_attempts"


def test_unknown_address_reset_is_an_invalid_code(api, db):
    response = reset(api, "123456", email="nobody@example.com")

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_code"


def test_a_deactivated_account_is_sent_no_reset_code(api, db):
    make_user("gone@example.com", is_active=False)

    assert forgot(api, "gone@example.com").status_code == 200
    assert mail.outbox == []
    assert not EmailCode.objects.exists()


# --- change-password -------------------------------------------------------------------------


def test_change_password_revokes_other_tokens_and_sets_a_fresh_cookie(owner_api, user):
    other_session = token_for(user)

    response = owner_api.post(
        CHANGE, {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}, format="json"
    )

    assert response.status_code == 200
    fresh = response.cookies["ff_token"].value
    assert me_with(fresh) == 200
    assert me_with(other_session) == 401
    assert owner_api.get(ME).status_code == 401  # the bearer token it was called with
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)


def test_change_password_with_a_wrong_current_password(owner_api, user):
    response = owner_api.post(
        CHANGE, {"currentPassword": "not it at all", "newPassword": NEW_PASSWORD}, format="json"
    )

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"currentPassword"}
    user.refresh_from_db()
    assert user.check_password(PASSWORD)
    assert owner_api.get(ME).status_code == 200


def test_change_password_wrong_guesses_count_as_failed_sign_ins(owner_api, user):
    for _ in range(10):
        owner_api.post(
            CHANGE, {"currentPassword": "guess", "newPassword": NEW_PASSWORD}, format="json"
        )

    response = owner_api.post(
        CHANGE, {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}, format="json"
    )

    assert response.status_code == 429
    assert "Retry-After" in response


def test_change_password_validates_the_new_password(owner_api, user):
    response = owner_api.post(
        CHANGE, {"currentPassword": PASSWORD, "newPassword": "12345678901"}, format="json"
    )

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"newPassword"}


def test_change_password_needs_authentication(api, user):
    response = api.post(
        CHANGE, {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}, format="json"
    )

    assert response.status_code == 401


def test_change_password_by_cookie_needs_csrf(csrf_api, user):
    csrf_api.cookies["ff_token"] = str(token_for(user))

    response = csrf_api.post(
        CHANGE, {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}, format="json"
    )

    assert response.status_code == 403
    user.refresh_from_db()
    assert user.check_password(PASSWORD)


# --- logout-all ------------------------------------------------------------------------------


def test_logout_all_revokes_every_token_and_expires_the_cookie(owner_api, user):
    tokens = [token_for(user) for _ in range(3)]

    response = owner_api.post(LOGOUT_ALL)

    assert response.status_code == 200
    assert set(response.json()) == {"message"}
    assert response.cookies["ff_token"]["max-age"] == 0
    assert [me_with(token) for token in tokens] == [401, 401, 401]
    assert owner_api.get(ME).status_code == 401
    fresh = login(CommitClient(), PASSWORD)
    assert me_with(fresh.cookies["ff_token"].value) == 200


def test_logout_all_leaves_other_accounts_alone(owner_api, other_user):
    theirs = token_for(other_user)

    owner_api.post(LOGOUT_ALL)

    assert me_with(theirs) == 200


def test_logout_all_needs_authentication(api, db):
    assert api.post(LOGOUT_ALL).status_code == 401


# --- operators -------------------------------------------------------------------------------


@pytest.fixture
def admin_client(client, db):
    User.objects.create_superuser("root@example.com", "an operator passphrase")
    client.login(username="root@example.com", password="an operator passphrase")
    return client


def admin_change(admin_client, user, **changes):
    data = {
        "email": user.email,
        "name": user.name,
        "is_verified": "on" if user.is_verified else "",
        "is_active": "on" if user.is_active else "",
        "monthly_submission_limit": "",
        "date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
        "date_joined_1": user.date_joined.strftime("%H:%M:%S"),
        **changes,
    }
    data = {key: value for key, value in data.items() if value != ""}
    return admin_client.post(f"/admin/accounts/user/{user.pk}/change/", data)


def test_operator_deactivating_a_user_revokes_their_tokens_for_good(admin_client, user):
    token = token_for(user)

    response = admin_change(admin_client, user, is_active="")
    assert response.status_code == 302
    assert me_with(token) == 401

    user.refresh_from_db()
    user.is_active = True
    user.save(update_fields=["is_active"])
    assert me_with(token) == 401


def test_operator_setting_a_password_revokes_the_users_tokens(admin_client, user):
    token = token_for(user)

    response = admin_client.post(
        f"/admin/accounts/user/{user.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )

    assert response.status_code == 302
    assert me_with(token) == 401
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)


def test_a_password_hash_upgrade_at_sign_in_revokes_nothing(api, user, settings):
    token = token_for(user)
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]

    assert login(api, PASSWORD).status_code == 200

    user.refresh_from_db()
    assert user.password.startswith("pbkdf2_")
    assert me_with(token) == 200


@pytest.mark.parametrize("path", [FORGOT, RESET])
def test_recovery_endpoints_take_twenty_requests_a_minute_per_address(api, db, path):
    def post(n, ip):
        body = {"email": f"someone{n}@example.com", "code": "123456", "password": NEW_PASSWORD}
        return api.post(path, body, format="json", REMOTE_ADDR=ip)

    statuses = [post(n, "198.51.100.7").status_code for n in range(21)]

    assert 429 not in statuses[:20]
    assert statuses[20] == 429
    assert post(21, "198.51.100.8").status_code != 429


def test_logout_takes_twenty_requests_a_minute_per_address(api, db):
    statuses = [
        api.post("/api/auth/logout", REMOTE_ADDR="198.51.100.7").status_code for _ in range(21)
    ]

    assert statuses[:20] == [200] * 20
    assert statuses[20] == 429


@pytest.fixture
def broker_away():
    from core.infra.broker import breaker

    breaker.trip()  # as after a failed publish: nothing is sent for a while
    yield
    breaker.reset()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/auth/signup", {"email": "new@example.com", "password": PASSWORD}),
        ("/api/auth/resend-otp", {"email": "new@example.com"}),
        (FORGOT, {"email": "owner@example.com"}),
    ],
    ids=["signup", "resend", "forgot"],
)
def test_account_requests_answer_503_while_the_broker_is_away(api, user, broker_away, path, body):
    response = api.post(path, body, format="json")

    assert response.status_code == 503
    assert response.json()["error"] == "service_unavailable"
    assert int(response["Retry-After"]) > 0
    assert not User.objects.filter(email="new@example.com").exists()
    assert mail.outbox == []
