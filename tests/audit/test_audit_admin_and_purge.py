"""The admin reads the log and cannot change it; changes made in the admin are recorded; the
hourly purge keeps entries 400 days."""

import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import transaction

from audit.models import Entry
from audit.services import Target, record
from core import clock
from integrations.jobs import purge
from tests.audit.conftest import entries, only
from tests.conftest import create_key


def write(owner, at=None) -> Entry:
    with transaction.atomic():
        entry = record(owner_id=owner.pk, actor=owner, action="form.changed",
                       target=Target("form", "f1", "Contact"))
    if at is not None:
        Entry.objects.filter(pk=entry.pk).update(at=at)
    return entry


def test_the_admin_lists_and_shows_entries_read_only(admin_client, user):
    entry = write(user)

    assert admin_client.get("/admin/audit/entry/").status_code == 200
    page = admin_client.get(f"/admin/audit/entry/{entry.pk}/change/")
    assert page.status_code == 200
    assert b'name="_save"' not in page.content


@pytest.mark.parametrize("path", ["add/", "{pk}/delete/"])
def test_the_admin_cannot_add_or_delete(admin_client, user, path):
    entry = write(user)

    assert admin_client.get(f"/admin/audit/entry/{path.format(pk=entry.pk)}").status_code == 403
    assert admin_client.post(f"/admin/audit/entry/{path.format(pk=entry.pk)}",
                             {"post": "yes"}).status_code == 403
    assert Entry.objects.filter(pk=entry.pk).exists()


def test_the_admin_cannot_change_an_entry(admin_client, user):
    entry = write(user)

    admin_client.post(f"/admin/audit/entry/{entry.pk}/change/", {"action": "form.deleted"})

    assert Entry.objects.get(pk=entry.pk).action == "form.changed"


def test_the_admin_bulk_delete_action_is_not_offered(admin_client, user):
    entry = write(user)

    admin_client.post("/admin/audit/entry/", {"action": "delete_selected",
                                              "_selected_action": [str(entry.pk)], "post": "yes"})

    assert Entry.objects.filter(pk=entry.pk).exists()


def test_a_form_changed_in_the_admin_is_recorded_with_the_operator(admin_client, operator,
                                                                  user, form):
    response = admin_client.post(f"/admin/forms_app/form/{form.pk}/change/", {
        "owner": str(user.pk), "name": "Renamed", "redirect_url": "", "allowed_origins": "[]",
        "rate_limit": 10, "honeypot_field": "", "captcha_provider": "recaptcha",
        "spam_filter": "on", "blocked_words": "[]", "notify_owner": "", "file_uploads": "null",
        "allow_extra_fields": "on",
    })

    assert response.status_code == 302, response.content.decode()[:3000]
    entry = only("form.changed")
    assert (entry.owner_id, entry.actor_id, entry.actor_email) == (
        user.pk, operator.pk, "admin@example.com")
    assert entry.details["via"] == "admin"
    assert "name" in entry.details["changed"]


def test_a_form_deleted_in_the_admin_is_recorded(admin_client, operator, user, form):
    admin_client.post(f"/admin/forms_app/form/{form.pk}/delete/", {"post": "yes"})

    entry = only("form.deleted")
    assert (entry.owner_id, entry.actor_id, entry.target_id) == (user.pk, operator.pk,
                                                                 str(form.pk))


def test_keys_revoked_in_the_admin_are_recorded(admin_client, operator, user, form):
    from pullapi.models import ApiKey

    create_key(user, [form])
    key = ApiKey.objects.get()
    admin_client.post("/admin/pullapi/apikey/", {"action": "revoke_keys",
                                                 "_selected_action": [str(key.pk)]})

    assert only("api_key.revoked").actor_id == operator.pk


def test_integrations_disabled_in_the_admin_are_recorded(admin_client, operator, hook):
    admin_client.post("/admin/integrations/integration/", {
        "action": "disable_integrations", "_selected_action": [str(hook.pk)]})

    entry = only("integration.changed")
    assert (entry.actor_id, entry.details) == (operator.pk, {"type": "WEBHOOK",
                                                             "changed": ["enabled"]})


def test_an_integration_deleted_in_the_admin_is_recorded(admin_client, operator, hook):
    admin_client.post(f"/admin/integrations/integration/{hook.pk}/delete/", {"post": "yes"})

    entry = only("integration.deleted")
    assert (entry.actor_id, entry.target_id, entry.details) == (operator.pk, str(hook.pk),
                                                                {"via": "admin"})


def test_an_account_changed_in_the_admin_names_the_fields(admin_client, operator, user):
    page = admin_client.get(f"/admin/accounts/user/{user.pk}/change/")
    assert page.status_code == 200
    response = admin_client.post(f"/admin/accounts/user/{user.pk}/change/", {
        "email": user.email, "name": "", "is_verified": "on", "is_active": "on",
        "monthly_submission_limit": 5000, "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00", "initial-date_joined_0": "2026-01-01",
        "initial-date_joined_1": "00:00:00",
    })

    assert response.status_code == 302, response.content.decode()[:2000]
    entry = only("account.changed")
    assert (entry.owner_id, entry.actor_id, entry.target_type) == (user.pk, operator.pk,
                                                                   "account")
    assert "monthlySubmissionLimit" in entry.details["changed"]


def test_a_password_set_in_the_admin_is_recorded_never_the_password(admin_client, operator,
                                                                    user):
    secret = "a brand new passphrase 42"
    response = admin_client.post(f"/admin/accounts/user/{user.pk}/password/", {
        "password1": secret, "password2": secret, "usable_password": "true"})

    assert response.status_code == 302
    entry = only("account.password_changed")
    assert (entry.owner_id, entry.actor_id, entry.details) == (
        user.pk, operator.pk, {"how": "set", "via": "admin"})
    assert secret not in str(entry.details)


def test_an_account_deleted_in_the_admin_leaves_its_log(admin_client, user):
    entry = write(user)

    response = admin_client.post(f"/admin/accounts/user/{user.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    kept = Entry.objects.get(pk=entry.pk)
    assert (kept.owner_id, kept.actor_id, kept.actor_email) == (None, None, "owner@example.com")
    deleted = only("account.deleted")
    assert (deleted.owner_id, deleted.target_id) == (None, str(user.pk))


def test_the_purge_keeps_400_days(user):
    kept = write(user, at=clock.now() - timedelta(days=399, hours=23))
    write(user, at=clock.now() - timedelta(days=401))

    went = purge()

    assert went["audit_entries"] == 1
    assert list(Entry.objects.values_list("pk", flat=True)) == [kept.pk]
    assert entries()


def test_the_purge_runs_on_beats_hourly_schedule():
    scheduled = settings.CELERY_BEAT_SCHEDULE["purge"]

    assert scheduled == {"task": "submissions.tasks.purge", "schedule": 3600}


def posted_form(admin_client, page: str, **changes) -> dict:
    """The change page's form as the browser would post it (hidden inputs included), with
    ``changes``."""
    html = admin_client.get(page).content.decode()
    fields = dict(re.findall(r'<input type="(?:hidden|text)" name="([^"]+)" value="([^"]*)"',
                             html))
    return {**fields, **changes}


def test_a_team_renamed_in_the_admin_is_in_the_teams_log(admin_client, operator, team_crew):
    page = f"/admin/teams/team/{team_crew.team.pk}/change/"

    response = admin_client.post(page, posted_form(admin_client, page, name="Renamed"))

    assert response.status_code == 302, response.content.decode()[:3000]
    entry = only("team.changed")
    assert (entry.team_id, entry.actor_id, entry.details) == (
        team_crew.team.pk, operator.pk, {"changed": ["name"], "via": "admin"})


def test_a_team_deleted_in_the_admin_is_recorded(admin_client, operator, team_crew):
    response = admin_client.post(f"/admin/teams/team/{team_crew.team.pk}/delete/",
                                 {"post": "yes"})

    assert response.status_code == 302
    entry = only("team.deleted")
    assert (entry.team_id, entry.actor_id, entry.target_id) == (
        team_crew.team.pk, operator.pk, str(team_crew.team.pk))


def test_an_invitation_deleted_in_the_admin_is_withdrawn_in_the_teams_log(
        admin_client, operator, team_crew):
    from teams.models import Invitation
    from teams.services import invitation_create

    invitation = invitation_create(team=team_crew.team, actor=team_crew.users["owner"],
                                   email="new@example.com", role="viewer")

    response = admin_client.post(f"/admin/teams/invitation/{invitation.pk}/delete/",
                                 {"post": "yes"})

    assert response.status_code == 302
    assert not Invitation.objects.exists()
    entry = only("member.invitation_withdrawn")
    assert (entry.team_id, entry.actor_id, entry.target_name) == (
        team_crew.team.pk, operator.pk, "new@example.com")


def test_a_team_form_changed_in_the_admin_is_in_the_teams_log(admin_client, operator,
                                                              team_crew):
    from forms_app.services import form_create

    form = form_create(owner=team_crew.users["owner"], name="Leads",
                       team=team_crew.team)
    page = f"/admin/forms_app/form/{form.pk}/change/"

    response = admin_client.post(page, posted_form(admin_client, page, name="Renamed",
                                                   rate_limit=10, spam_filter="on",
                                                   captcha_provider="recaptcha",
                                                   allowed_origins="[]", blocked_words="[]",
                                                   file_uploads="null",
                                                   allow_extra_fields="on"))

    assert response.status_code == 302, response.content.decode()[:3000]
    assert only("form.changed").team_id == team_crew.team.pk


def test_a_form_is_not_moved_out_of_its_team_in_the_admin(admin_client, team_crew):
    from forms_app.models import Form
    from forms_app.services import form_create

    form = form_create(owner=team_crew.users["owner"], name="Leads", team=team_crew.team)
    page = f"/admin/forms_app/form/{form.pk}/change/"

    admin_client.post(page, posted_form(admin_client, page, team="", rate_limit=10,
                                        spam_filter="on", captcha_provider="recaptcha",
                                        allowed_origins="[]", blocked_words="[]",
                                        file_uploads="null", allow_extra_fields="on"))

    assert Form.objects.get(pk=form.pk).team_id == team_crew.team.pk
    assert entries("form.moved") == []


def test_a_team_deletion_that_fails_in_the_admin_leaves_the_team_and_no_entry(
        admin_client, team_crew, monkeypatch):
    from teams.models import Team

    def fails(*args, **kwargs):
        raise RuntimeError("the database went away")

    # The delete page's last step, after the entry, inside the admin's transaction.
    monkeypatch.setattr("teams.admin.TeamAdmin.message_user", fails)
    admin_client.raise_request_exception = False

    response = admin_client.post(f"/admin/teams/team/{team_crew.team.pk}/delete/",
                                 {"post": "yes"})

    assert response.status_code == 500
    assert Team.objects.filter(pk=team_crew.team.pk).exists()
    assert entries() == []
