"""Attacks on teams, roles, invitations and the audit log, over HTTP. A failing test here is
a hole; a passing one, a defence that held."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from audit.models import Entry
from forms_app.services import form_create
from integrations.models import Integration
from integrations.services import integration_create
from teams.models import Membership
from tests.conftest import PASSWORD, CommitBrowserClient, make_user
from tests.teams.helpers import client_of

pytestmark = pytest.mark.django_db

ACCEPT = "/api/v1/invitations/accept"


def browser(user) -> CommitBrowserClient:
    client = CommitBrowserClient()
    response = client.post("/dashboard/login", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 302
    return client


def member_path(crew, who: str) -> str:
    return f"/api/v1/teams/{crew.team.pk}/members/{crew.users[who].pk}"


def role_of(crew, who: str) -> str | None:
    return Membership.objects.filter(team=crew.team, user=crew.users[who]).values_list(
        "role", flat=True).first()


def mailed_token(address: str) -> str:
    for message in reversed(mail.outbox):
        if address in message.to:
            return re.search(r"/dashboard/invitations/(\S+)", message.body).group(1)
    raise AssertionError(f"no invitation was mailed to {address}")


@pytest.fixture
def team_form(team_crew):
    return form_create(owner=team_crew.users["owner"], name="Shared", team=team_crew.team,
                       notify_owner=False)


def _webhook(user, form):
    return integration_create(owner=user, type="WEBHOOK",
                              config={"url": "https://hooks.example.com/x"},
                              form_id=str(form.pk))


# --- Holes suspected: a removed member keeps power over the team form's integrations ---


def test_removed_member_cannot_reenable_own_notification_from_dashboard(team_crew, team_form):
    """Repro: editor turns notify on, is removed, POSTs /dashboard/integrations/<id>/toggle."""
    crew = team_crew
    editor = crew.users["editor"]
    assert crew.api("editor").patch(f"/api/v1/forms/{team_form.pk}/me", {"notify": True},
                                    format="json").status_code == 200
    assert crew.api("owner").delete(member_path(crew, "editor")).status_code == 204
    notification = Integration.objects.get(owner=editor, form=team_form)
    assert not notification.enabled  # the hook turned it off
    browser(editor).post(f"/dashboard/integrations/{notification.pk}/toggle")
    notification.refresh_from_db()
    assert not notification.enabled, "a removed member turned team-form notifications back on"


def test_removed_editor_cannot_delete_team_integration_from_dashboard(team_crew, team_form):
    """Repro: editor makes a webhook on the team form, is removed, POSTs .../delete."""
    crew = team_crew
    editor = crew.users["editor"]
    hook = _webhook(editor, team_form)
    assert crew.api("owner").delete(member_path(crew, "editor")).status_code == 204
    response = browser(editor).post(f"/dashboard/integrations/{hook.pk}/delete")
    assert response.status_code in (403, 404)
    assert Integration.objects.filter(pk=hook.pk).exists()


def test_removed_editor_cannot_toggle_team_integration_from_dashboard(team_crew, team_form):
    crew = team_crew
    editor = crew.users["editor"]
    hook = _webhook(editor, team_form)
    assert crew.api("owner").delete(member_path(crew, "editor")).status_code == 204
    response = browser(editor).post(f"/dashboard/integrations/{hook.pk}/toggle")
    assert response.status_code in (403, 404)
    assert Integration.objects.get(pk=hook.pk).enabled


def test_demoted_to_viewer_cannot_toggle_team_integration_from_dashboard(team_crew, team_form):
    """Managing integrations needs editor; a demoted viewer still toggles their own."""
    crew = team_crew
    editor = crew.users["editor"]
    hook = _webhook(editor, team_form)
    crew.api("owner").patch(member_path(crew, "editor"), {"role": "viewer"}, format="json")
    response = browser(editor).post(f"/dashboard/integrations/{hook.pk}/toggle")
    assert response.status_code in (403, 404)
    assert Integration.objects.get(pk=hook.pk).enabled


def test_removed_editor_cannot_change_team_integration_via_api(team_crew, team_form):
    crew = team_crew
    hook = _webhook(crew.users["editor"], team_form)
    assert crew.api("owner").delete(member_path(crew, "editor")).status_code == 204
    response = crew.api("editor").patch(f"/api/v1/integrations/{hook.pk}", {"enabled": False},
                                        format="json")
    assert response.status_code == 404
    assert Integration.objects.get(pk=hook.pk).enabled


# --- Escalation attempts that should be refused ---


def test_viewer_cannot_promote_self(team_crew):
    response = team_crew.api("viewer").patch(member_path(team_crew, "viewer"),
                                             {"role": "admin"}, format="json")
    assert response.status_code == 403
    assert role_of(team_crew, "viewer") == "viewer"


def test_admin_cannot_promote_self_to_owner(team_crew):
    response = team_crew.api("admin").patch(member_path(team_crew, "admin"),
                                            {"role": "owner"}, format="json")
    assert response.status_code == 403
    assert role_of(team_crew, "admin") == "admin"


def test_admin_cannot_demote_or_remove_owner(team_crew):
    api = team_crew.api("admin")
    assert api.patch(member_path(team_crew, "owner"), {"role": "viewer"},
                     format="json").status_code == 403
    assert api.delete(member_path(team_crew, "owner")).status_code == 403
    assert role_of(team_crew, "owner") == "owner"


def test_admin_cannot_invite_an_owner_even_own_alias(team_crew):
    response = team_crew.api("admin").post(f"/api/v1/teams/{team_crew.team.pk}/invitations",
                                           {"email": "alias@evil.example", "role": "owner"},
                                           format="json")
    assert response.status_code == 403
    assert not mail.outbox


def test_admin_cannot_take_account_of_record(team_crew):
    response = team_crew.api("admin").patch(f"/api/v1/teams/{team_crew.team.pk}",
                                            {"accountOfRecord": str(team_crew.users["admin"].pk),
                                             "name": "Pwned"}, format="json")
    assert response.status_code == 403
    team_crew.team.refresh_from_db()
    assert team_crew.team.name == "Agency"
    assert team_crew.team.account_of_record_id == team_crew.users["owner"].pk


def test_invitation_for_another_address_cannot_be_accepted(team_crew):
    team_crew.api("owner").post(f"/api/v1/teams/{team_crew.team.pk}/invitations",
                                {"email": "boss@example.com", "role": "owner"}, format="json")
    token = mailed_token("boss@example.com")
    thief = team_crew.users["viewer"]
    assert client_of(thief).post(ACCEPT, {"token": token}, format="json").status_code == 403
    assert browser(thief).post(f"/dashboard/invitations/{token}").status_code == 403
    assert role_of(team_crew, "viewer") == "viewer"


def test_uppercase_lookalike_address_cannot_accept(team_crew):
    team_crew.api("owner").post(f"/api/v1/teams/{team_crew.team.pk}/invitations",
                                {"email": "boss@example.com", "role": "admin"}, format="json")
    token = mailed_token("boss@example.com")
    lookalike = make_user("boss@example.com.evil.example")
    assert client_of(lookalike).post(ACCEPT, {"token": token}, format="json").status_code == 403


def test_accepting_a_lower_invitation_never_demotes_nor_a_higher_promotes(team_crew):
    owner = team_crew.api("owner")
    owner.post(f"/api/v1/teams/{team_crew.team.pk}/invitations",
               {"email": "viewer@team.example", "role": "admin"}, format="json")
    token = mailed_token("viewer@team.example")
    team_crew.api("viewer").post(ACCEPT, {"token": token}, format="json")
    assert role_of(team_crew, "viewer") == "viewer"


def test_the_last_owner_cannot_self_demote_or_leave(team_crew):
    api = team_crew.api("owner")
    assert api.patch(member_path(team_crew, "owner"), {"role": "admin"},
                     format="json").status_code == 409
    assert api.delete(member_path(team_crew, "owner")).status_code == 409
    assert role_of(team_crew, "owner") == "owner"


def test_two_owners_cannot_both_step_down(team_crew):
    crew = team_crew
    crew.api("owner").patch(member_path(crew, "admin"), {"role": "owner"}, format="json")
    assert crew.api("owner").patch(member_path(crew, "owner"), {"role": "admin"},
                                   format="json").status_code == 200
    assert crew.api("admin").patch(member_path(crew, "admin"), {"role": "editor"},
                                   format="json").status_code == 409
    assert Membership.objects.filter(team=crew.team, role="owner").count() == 1


# --- IDOR via ids in bodies ---


def test_outsider_cannot_create_a_form_in_a_team(team_crew):
    response = team_crew.api("outsider").post("/api/v1/forms", {
        "name": "Mine", "teamId": str(team_crew.team.pk)}, format="json")
    assert response.status_code == 404


def test_editor_cannot_move_a_team_form_out(team_crew, team_form):
    response = team_crew.api("editor").patch(f"/api/v1/forms/{team_form.pk}",
                                             {"teamId": None}, format="json")
    assert response.status_code == 403
    team_form.refresh_from_db()
    assert team_form.team_id == team_crew.team.pk


def test_admin_cannot_pull_a_team_form_they_did_not_create_out(team_crew, team_form):
    response = team_crew.api("admin").patch(f"/api/v1/forms/{team_form.pk}",
                                            {"teamId": None}, format="json")
    assert response.status_code == 403
    team_form.refresh_from_db()
    assert team_form.team_id == team_crew.team.pk


def test_viewer_cannot_make_an_api_key_on_a_team_form(team_crew, team_form):
    response = team_crew.api("viewer").post("/api/v1/api-keys", {
        "name": "leak", "forms": [str(team_form.pk)]}, format="json")
    assert response.status_code in (400, 403)
    assert "key" not in response.json()


def test_outsider_cannot_add_a_webhook_on_a_team_form(team_crew, team_form):
    response = team_crew.api("outsider").post("/api/v1/integrations", {
        "type": "WEBHOOK", "config": {"url": "https://evil.example/x"},
        "formId": str(team_form.pk)}, format="json")
    assert response.status_code in (400, 404)
    assert not Integration.objects.filter(form=team_form, type="WEBHOOK").exists()


def test_viewer_cannot_add_a_webhook_on_a_team_form(team_crew, team_form):
    response = team_crew.api("viewer").post("/api/v1/integrations", {
        "type": "WEBHOOK", "config": {"url": "https://evil.example/x"},
        "formId": str(team_form.pk)}, format="json")
    assert response.status_code == 403
    assert not Integration.objects.filter(form=team_form, type="WEBHOOK").exists()


def test_viewer_cannot_add_a_webhook_on_a_team_form_from_dashboard(team_crew, team_form):
    browser(team_crew.users["viewer"]).post("/dashboard/integrations/new", {
        "type": "WEBHOOK", "url": "https://evil.example/x", "formId": str(team_form.pk)})
    assert not Integration.objects.filter(form=team_form, type="WEBHOOK").exists()


# --- The audit log ---


def test_editor_and_outsider_cannot_read_the_team_log(team_crew):
    path = f"/api/v1/teams/{team_crew.team.pk}/audit"
    assert team_crew.api("editor").get(path).status_code == 403
    assert team_crew.api("outsider").get(path).status_code == 404


def test_team_log_is_not_in_the_account_of_record_personal_log(team_crew, team_form):
    data = team_crew.api("owner").get("/api/v1/audit").json()["data"]
    assert all(entry["target"]["_id"] != str(team_form.pk) for entry in data)


def test_audit_entries_cannot_be_changed_or_deleted(team_crew):
    entry = Entry.objects.filter(team_id=team_crew.team.pk).first()
    for path in (f"/api/v1/teams/{team_crew.team.pk}/audit", "/api/v1/audit",
                 f"/api/v1/audit/{entry.pk}"):
        for method in ("delete", "patch", "put", "post"):
            assert getattr(team_crew.api("owner"), method)(path, {}, format="json"
                                                           ).status_code in (404, 405)
    assert Entry.objects.filter(pk=entry.pk).exists()


def test_audit_never_holds_a_secret_or_the_invitation_token(team_crew, team_form):
    crew = team_crew
    crew.api("owner").post(f"/api/v1/teams/{crew.team.pk}/invitations",
                           {"email": "new@example.com", "role": "editor"}, format="json")
    token = mailed_token("new@example.com")
    crew.api("editor").patch(f"/api/v1/forms/{team_form.pk}", {
        "recaptchaSecret": "SUPERSECRETVALUE123"}, format="json")
    body = crew.api("owner").get(f"/api/v1/teams/{crew.team.pk}/audit?limit=100").content
    assert b"SUPERSECRETVALUE123" not in body
    assert token.encode() not in body


def test_removed_member_who_reenabled_notifications_gets_team_submissions(
        public, team_crew, team_form):
    """Repro: as above, then a public submission to the team form is emailed to the outcast."""
    from integrations.models import Delivery
    from tests.conftest import submit

    crew = team_crew
    editor = crew.users["editor"]
    crew.api("editor").patch(f"/api/v1/forms/{team_form.pk}/me", {"notify": True},
                             format="json")
    crew.api("owner").delete(member_path(crew, "editor"))
    notification = Integration.objects.get(owner=editor, form=team_form)
    browser(editor).post(f"/dashboard/integrations/{notification.pk}/toggle")
    submit(public, team_form, {"secret": "payroll"})
    assert not Delivery.objects.filter(integration__owner=editor).exists()


def test_an_editors_erasure_of_team_submissions_is_in_the_team_log(team_crew, team_form):
    """Repro: editor POSTs /api/v1/erasures {email}; the team form's submission goes, and the
    team's admins see nothing in GET /api/v1/teams/{id}/audit (only the editor's own log)."""
    from submissions.models import Submission
    from tests.conftest import add_submission

    crew = team_crew
    add_submission(team_form, {"email": "client@example.com"})
    response = crew.api("editor").post("/api/v1/erasures", {"email": "client@example.com"},
                                       format="json")
    assert response.status_code == 201
    assert not Submission.objects.filter(form=team_form).exists()
    log = crew.api("owner").get(f"/api/v1/teams/{crew.team.pk}/audit?limit=100").json()["data"]
    actions = [entry["action"] for entry in log]
    assert any(action.startswith(("erasure", "submission")) for action in actions), actions


def test_an_admins_open_invitations_die_with_their_admin_role(team_crew):
    """Repro: admin invites a second address of theirs as admin, is removed, the alias accepts
    and is admin again. (Suspected: the contract lets a removed member keep nothing.)"""
    crew = team_crew
    crew.api("admin").post(f"/api/v1/teams/{crew.team.pk}/invitations",
                           {"email": "alias@evil.example", "role": "admin"}, format="json")
    token = mailed_token("alias@evil.example")
    assert crew.api("owner").delete(member_path(crew, "admin")).status_code == 204
    alias = make_user("alias@evil.example")
    client_of(alias).post(ACCEPT, {"token": token}, format="json")
    assert not Membership.objects.filter(team=crew.team, user=alias).exists()


def test_an_invitation_token_is_single_use(team_crew):
    crew = team_crew
    crew.api("owner").post(f"/api/v1/teams/{crew.team.pk}/invitations",
                           {"email": "new@example.com", "role": "viewer"}, format="json")
    token = mailed_token("new@example.com")
    joiner = make_user("new@example.com")
    assert client_of(joiner).post(ACCEPT, {"token": token}, format="json").status_code == 200
    crew.api("owner").delete(f"/api/v1/teams/{crew.team.pk}/members/{joiner.pk}")
    assert client_of(joiner).post(ACCEPT, {"token": token}, format="json").status_code == 400
    assert not Membership.objects.filter(team=crew.team, user=joiner).exists()


def test_a_removed_member_loses_the_team_form_at_once(team_crew, team_form):
    crew = team_crew
    editor_browser = browser(crew.users["editor"])
    assert editor_browser.get(f"/dashboard/forms/{team_form.pk}/settings").status_code == 200
    crew.api("owner").delete(member_path(crew, "editor"))
    assert editor_browser.get(f"/dashboard/forms/{team_form.pk}/settings").status_code == 404
    assert crew.api("editor").get(f"/api/v1/forms/{team_form.pk}").status_code == 404
    assert crew.api("editor").get(f"/api/v1/forms/{team_form.pk}/export?format=csv"
                                  ).status_code == 404
