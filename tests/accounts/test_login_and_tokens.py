import base64
import json
from datetime import timedelta

import jwt
import pytest
from django.conf import settings
from rest_framework_simplejwt.tokens import AccessToken

from tests.conftest import PASSWORD, bearer, make_user

LOGIN = "/api/auth/login"
TOKEN = "/api/auth/token"
ME = "/api/auth/me"
LOGOUT = "/api/auth/logout"


def login(api, email="owner@example.com", password=PASSWORD, url=LOGIN):
    return api.post(url, {"email": email, "password": password}, format="json")


def test_login_returns_user_and_sets_cookie(api, user):
    response = login(api)

    assert response.status_code == 200
    assert response.json() == {
        "user": {
            "_id": str(user.pk),
            "email": "owner@example.com",
            "isVerified": True,
            "onboardingComplete": False,
        }
    }
    assert PASSWORD not in response.content.decode()


def test_login_cookie_attributes(api, user):
    cookie = login(api).cookies["ff_token"]

    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert cookie["path"] == "/"
    assert cookie["max-age"] == 7 * 24 * 3600
    assert cookie["secure"] is True  # DEBUG is off


def test_login_cookie_not_secure_in_debug(api, user, settings):
    settings.AUTH_COOKIE_SECURE = False  # what DEBUG=true sets

    assert login(api).cookies["ff_token"]["secure"] == ""


def test_login_email_is_case_insensitive(api, user):
    assert login(api, email="OWNER@Example.com").status_code == 200


def test_wrong_password_and_unknown_email_get_the_same_401(api, user):
    wrong = login(api, password="not-the-password")
    unknown = login(api, email="ghost@example.com")

    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()
    assert wrong.json()["error"] == "invalid_credentials"
    assert "ff_token" not in wrong.cookies


def test_unverified_login_is_403(api):
    make_user("pending@example.com", verified=False)

    response = login(api, email="pending@example.com")

    assert response.status_code == 403
    assert response.json()["error"] == "email_not_verified"
    assert "ff_token" not in response.cookies


def test_login_requires_json(api, user):
    response = api.post(LOGIN, {"email": "owner@example.com", "password": PASSWORD})

    assert response.status_code == 415


def test_login_validates_body(api):
    response = api.post(LOGIN, {}, format="json")

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"email", "password"}


def test_token_endpoint_returns_bearer_token(api, user):
    response = login(api, url=TOKEN)

    assert response.status_code == 200
    body = response.json()
    assert body["tokenType"] == "Bearer"
    assert body["expiresIn"] == 7 * 24 * 3600
    assert set(body) == {"accessToken", "tokenType", "expiresIn"}
    me = api.get(ME, HTTP_AUTHORIZATION=f"Bearer {body['accessToken']}")
    assert me.status_code == 200


def test_token_endpoint_has_login_error_rules(api):
    make_user("pending@example.com", verified=False)

    assert login(api, url=TOKEN, password="wrong-password").status_code == 401
    assert login(api, url=TOKEN, email="pending@example.com").status_code == 403


def test_me_returns_current_user(owner_api, user):
    user.name = "Ada"
    user.save()

    response = owner_api.get(ME)

    assert response.status_code == 200
    assert response.json() == {
        "user": {
            "_id": str(user.pk),
            "email": "owner@example.com",
            "name": "Ada",
            "isVerified": True,
            "onboardingComplete": False,
            "monthlySubmissionCount": 0,
            "monthlySubmissionLimit": 1000,
        }
    }


def test_me_reports_operator_limit_override(owner_api, user):
    user.monthly_submission_limit = 50
    user.save()

    assert owner_api.get(ME).json()["user"]["monthlySubmissionLimit"] == 50


def test_me_anonymous_is_401_json(api):
    response = api.get(ME)

    assert response.status_code == 401
    assert response.json() == {
        "error": "not_authenticated",
        "message": "Authentication credentials were not provided.",
    }


def test_patch_me_updates_profile(owner_api):
    response = owner_api.patch(ME, {"name": "Grace", "onboardingComplete": True}, format="json")

    assert response.status_code == 200
    assert response.json()["user"]["name"] == "Grace"
    assert response.json()["user"]["onboardingComplete"] is True


def test_patch_me_rejects_bad_types(owner_api, user):
    response = owner_api.patch(ME, {"onboardingComplete": "maybe"}, format="json")

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"onboardingComplete"}


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def expired_token(user):
    token = AccessToken.for_user(user)
    token.set_exp(lifetime=-timedelta(seconds=1))
    return str(token)


def tampered_token(user):
    header, payload, signature = str(AccessToken.for_user(user)).split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    claims["sub"] = "someone-else"
    return f"{header}.{_b64(claims)}.{signature}"


def none_alg_token(user):
    claims = AccessToken.for_user(user).payload
    return f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(claims)}."


def other_key_token(user):
    claims = AccessToken.for_user(user).payload
    return jwt.encode(claims, "x" * 64, algorithm="HS256")


@pytest.mark.parametrize(
    "make_token",
    [expired_token, tampered_token, none_alg_token, other_key_token],
    ids=["expired", "tampered", "alg-none", "other-key"],
)
def test_bad_tokens_are_401(api, user, make_token):
    token = make_token(user)

    by_header = api.get(ME, HTTP_AUTHORIZATION=f"Bearer {token}")
    api.cookies["ff_token"] = token
    by_cookie = api.get(ME)

    assert by_header.status_code == by_cookie.status_code == 401
    assert by_header.json()["error"] == "authentication_failed"


def test_api_key_is_refused_on_dashboard_endpoints(api, user):
    response = api.get(ME, HTTP_AUTHORIZATION="Bearer ff_live_" + "a" * 38)

    assert response.status_code == 401


def test_malformed_authorization_header_is_401(api, user):
    response = api.get(ME, HTTP_AUTHORIZATION="Token abc")

    assert response.status_code == 401


def test_logout_clears_cookie_and_revokes_token(api, user):
    login(api)
    token = api.cookies["ff_token"].value

    response = api.post(LOGOUT)

    assert response.status_code == 200
    assert set(response.json()) == {"message"}
    cleared = response.cookies["ff_token"]
    assert cleared.value == ""
    assert cleared["max-age"] == 0
    assert api.get(ME, HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401


def test_logout_revokes_bearer_token_only(api, user):
    first, second = bearer(user), bearer(user)

    api.post(LOGOUT, HTTP_AUTHORIZATION=first)

    assert api.get(ME, HTTP_AUTHORIZATION=first).status_code == 401
    assert api.get(ME, HTTP_AUTHORIZATION=second).status_code == 200


def test_logout_without_token_still_answers_200(api):
    assert api.post(LOGOUT).status_code == 200


def test_logout_is_csrf_exempt(csrf_api, user):
    login(csrf_api)

    response = csrf_api.post(LOGOUT)

    assert response.status_code == 200


def test_cookie_write_without_csrf_token_is_403(csrf_api, user):
    login(csrf_api)

    response = csrf_api.patch(ME, {"name": "Mallory"}, format="json")

    assert response.status_code == 403
    assert response.json()["error"] == "csrf_failed"
    user.refresh_from_db()
    assert user.name == ""


def test_cookie_write_with_csrf_token_succeeds(csrf_api, user):
    login(csrf_api)
    csrf_api.get(ME)  # any page may hand out the token; here we set one explicitly
    csrf_api.cookies[settings.CSRF_COOKIE_NAME] = "a" * 32

    response = csrf_api.patch(
        ME,
        {"name": "Ada"},
        format="json",
        HTTP_X_CSRFTOKEN="a" * 32,
        secure=True,
        HTTP_REFERER="https://testserver/",
    )

    assert response.status_code == 200


def test_bearer_write_needs_no_csrf_token(csrf_api, user):
    response = csrf_api.patch(ME, {"name": "Ada"}, format="json", HTTP_AUTHORIZATION=bearer(user))

    assert response.status_code == 200


def test_cookie_read_needs_no_csrf_token(csrf_api, user):
    login(csrf_api)

    assert csrf_api.get(ME).status_code == 200
