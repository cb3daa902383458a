"""REGISTRATION, invitations and operator-made accounts (contract, "Operations")."""

import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command

from accounts.models import Invitation, User
from tests.conftest import PASSWORD

SIGNUP = "/api/auth/signup"


def sign_up(api, email="new@example.com", password=PASSWORD):
    return api.post(SIGNUP, {"email": email, "password": password}, format="json")


def test_open_registration_is_the_default(api, settings):
    assert settings.REGISTRATION == "open"
    assert sign_up(api).status_code == 201


def test_closed_registration_refuses_every_sign_up(api, settings):
    settings.REGISTRATION = "closed"

    response = sign_up(api)

    assert response.status_code == 403
    assert response.json() == {
        "error": "registration_closed",
        "message": "Sign-up is closed on this server. Ask its operator for an account.",
    }
    assert not User.objects.filter(email="new@example.com").exists()


def test_closed_registration_answers_403_before_checking_the_body(api, settings):
    settings.REGISTRATION = "closed"

    assert sign_up(api, password="short").status_code == 403
    assert api.post(SIGNUP, [], format="json").status_code == 403


def test_invite_registration_refuses_an_address_without_an_invitation(api, settings):
    settings.REGISTRATION = "invite"
    call_command("invite", "someone@example.com", stdout=io.StringIO())

    response = sign_up(api)

    assert response.status_code == 403
    assert response.json()["error"] == "registration_closed"
    assert not User.objects.filter(email="new@example.com").exists()


def test_invite_registration_lets_an_invited_address_sign_up(api, settings):
    settings.REGISTRATION = "invite"
    out = io.StringIO()
    call_command("invite", "New@Example.com", stdout=out)

    response = sign_up(api, email="new@EXAMPLE.com")

    assert response.status_code == 201
    assert User.objects.filter(email="new@example.com", is_verified=False).exists()
    assert out.getvalue().startswith("Invited new@example.com until ")


def test_an_invitation_lasts_seven_days(api, settings, clock):
    settings.REGISTRATION = "invite"
    call_command("invite", "new@example.com", stdout=io.StringIO())

    clock.advance(days=6, hours=23)
    assert sign_up(api).status_code == 201
    clock.advance(hours=2)
    assert sign_up(api).status_code == 403


def test_inviting_again_renews_the_invitation(db, settings, clock):
    call_command("invite", "new@example.com", stdout=io.StringIO())
    clock.advance(days=5)
    call_command("invite", "new@example.com", stdout=io.StringIO())

    invitation = Invitation.objects.get()
    assert invitation.expires_at == clock.current + timedelta(days=7)


def test_invite_refuses_a_malformed_address(db):
    with pytest.raises(CommandError, match="is not an email address"):
        call_command("invite", "not-an-address")
    assert not Invitation.objects.exists()


def test_the_dashboard_sign_up_page_says_registration_is_closed(client, settings, db):
    settings.REGISTRATION = "closed"

    page = client.get("/dashboard/signup")
    posted = client.post("/dashboard/signup", {"email": "new@example.com",
                                               "password": PASSWORD})

    assert page.status_code == 200
    assert "Sign-up is closed on this server" in page.content.decode()
    assert posted.status_code == 403
    assert not User.objects.filter(email="new@example.com").exists()


def test_the_dashboard_sign_up_page_says_it_is_by_invitation(client, settings, db):
    settings.REGISTRATION = "invite"
    call_command("invite", "new@example.com", stdout=io.StringIO())

    page = client.get("/dashboard/signup")
    refused = client.post("/dashboard/signup", {"email": "other@example.com",
                                                "password": PASSWORD})
    invited = client.post("/dashboard/signup", {"email": "new@example.com",
                                                "password": PASSWORD})

    assert "by invitation" in page.content.decode()
    assert refused.status_code == 403
    assert invited.status_code == 302
    assert User.objects.filter(email="new@example.com").exists()


def test_an_admin_invites_an_address(client, db):
    admin = User.objects.create_superuser("admin@example.com", "admin-pass-123")
    client.force_login(admin)

    response = client.post("/admin/accounts/invitation/add/", {"email": "Guest@Example.com"})

    assert response.status_code == 302
    invitation = Invitation.objects.get()
    assert invitation.email == "guest@example.com"
    assert invitation.expires_at - invitation.invited_at == timedelta(days=7)


def test_an_admin_action_renews_invitations(client, db, clock):
    admin = User.objects.create_superuser("admin@example.com", "admin-pass-123")
    client.force_login(admin)
    call_command("invite", "guest@example.com", stdout=io.StringIO())
    clock.advance(days=3)

    client.post("/admin/accounts/invitation/", {
        "action": "renew", "_selected_action": [Invitation.objects.get().pk],
    })

    assert Invitation.objects.get().expires_at == clock.current + timedelta(days=7)


def createuser(*args):
    out = io.StringIO()
    call_command("createuser", *args, stdout=out)
    return out.getvalue()


def test_createuser_makes_a_verified_account_from_the_prompt(db, monkeypatch, api):
    answers = iter([PASSWORD, PASSWORD])
    monkeypatch.setattr("getpass.getpass", lambda _prompt: next(answers))

    out = createuser("--email", "Made@Example.com")

    user = User.objects.get(email="made@example.com")
    assert user.is_verified and not user.is_staff
    assert out == "Created the verified account made@example.com.\n"
    login = api.post("/api/auth/login", {"email": "made@example.com", "password": PASSWORD},
                     format="json")
    assert login.status_code == 200


def test_createuser_works_with_registration_closed(db, monkeypatch, settings):
    settings.REGISTRATION = "closed"
    answers = iter([PASSWORD, PASSWORD])
    monkeypatch.setattr("getpass.getpass", lambda _prompt: next(answers))

    createuser("--email", "made@example.com", "--staff")

    user = User.objects.get(email="made@example.com")
    assert user.is_verified and user.is_staff and user.is_superuser


def test_createuser_refuses_two_different_passwords(db, monkeypatch):
    answers = iter([PASSWORD, PASSWORD + "x"])
    monkeypatch.setattr("getpass.getpass", lambda _prompt: next(answers))

    with pytest.raises(CommandError, match="The two passwords differ"):
        createuser("--email", "made@example.com")
    assert not User.objects.exists()


def test_createuser_applies_the_password_validators(db, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("12345678901\n"))

    with pytest.raises(CommandError, match="entirely numeric"):
        createuser("--email", "made@example.com", "--password-stdin")
    assert not User.objects.exists()


def test_createuser_reads_the_password_from_stdin(db, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))

    createuser("--email", "made@example.com", "--password-stdin")

    assert User.objects.get(email="made@example.com").check_password(PASSWORD)


def test_createuser_refuses_an_address_that_has_an_account(user, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))

    with pytest.raises(CommandError, match="already exists"):
        createuser("--email", user.email.upper(), "--password-stdin")
