"""An account deleted in the admin leaves its teams as a removed member does: a team keeps an
owner (the last owner cannot be deleted), its account of record and the forms the account made
pass to another owner, and the team goes on working."""

from __future__ import annotations

import pytest
from django.db import transaction

from accounts.admin import UserAdmin
from accounts.models import User
from audit.models import Entry
from core.errors import ServiceError
from forms_app.models import Form
from teams import services
from teams.models import Membership, Team
from teams.roles import Role

pytestmark = pytest.mark.django_db

LAST_OWNER = "owner@team.example is the last owner of the team “Agency”"


@pytest.fixture
def admin_client(client):
    client.force_login(User.objects.create_superuser("operator@example.com", "admin-pass-123"))
    return client


@pytest.fixture
def team_form(team_crew) -> str:
    """A form the owner (the account of record) made in the team, over the API."""
    made = team_crew.api("owner").post("/api/v1/forms", {"name": "Leads",
                                                         "teamId": str(team_crew.team.pk)},
                                       format="json")
    assert made.status_code == 201
    return made.json()["_id"]


def delete_in_admin(admin_client, user):
    return admin_client.post(f"/admin/accounts/user/{user.pk}/delete/", {"post": "yes"})


def delete_selected(admin_client, *users):
    return admin_client.post("/admin/accounts/user/", {
        "action": "delete_selected", "_selected_action": [str(user.pk) for user in users],
        "post": "yes"})


def test_the_last_owner_cannot_be_deleted_in_the_admin(admin_client, team_crew, team_form):
    owner = team_crew.users["owner"]

    page = admin_client.get(f"/admin/accounts/user/{owner.pk}/delete/")
    response = delete_in_admin(admin_client, owner)

    assert LAST_OWNER in page.content.decode()
    assert response.status_code == 200  # the page again, with the reason
    assert LAST_OWNER in response.content.decode()
    assert User.objects.filter(pk=owner.pk).exists()
    assert Membership.objects.filter(user=owner, role=Role.OWNER).exists()
    assert Form.objects.filter(pk=team_form).exists()
    assert not Entry.objects.filter(action__in=["account.deleted", "member.removed"]).exists()


def test_deleting_selected_users_with_a_last_owner_among_them_deletes_none(
        admin_client, team_crew):
    viewer, owner = team_crew.users["viewer"], team_crew.users["owner"]

    response = delete_selected(admin_client, viewer, owner)

    assert response.status_code == 200
    assert LAST_OWNER in response.content.decode()
    assert User.objects.filter(pk__in=[viewer.pk, owner.pk]).count() == 2
    assert team_crew.team.memberships.count() == 4


def test_a_last_owner_deleted_by_a_queryset_elsewhere_is_refused_too(team_crew):
    owner = team_crew.users["owner"]

    with pytest.raises(ServiceError) as refused, transaction.atomic():
        User.objects.filter(pk=owner.pk).delete()

    assert refused.value.code == "last_owner"
    assert User.objects.filter(pk=owner.pk).exists()
    assert Membership.objects.filter(user=owner, role=Role.OWNER).exists()


@pytest.mark.parametrize("how", ["one", "selected"])
def test_an_owner_beside_another_hands_the_team_on_and_it_keeps_working(
        admin_client, team_crew, team_form, how):
    owner, heir = team_crew.users["owner"], team_crew.users["admin"]
    assert team_crew.api("owner").patch(
        f"/api/v1/teams/{team_crew.team.pk}/members/{heir.pk}", {"role": "owner"},
        format="json").status_code == 200

    response = (delete_in_admin(admin_client, owner) if how == "one"
                else delete_selected(admin_client, owner))

    assert response.status_code == 302, response.content.decode()[:3000]
    assert not User.objects.filter(pk=owner.pk).exists()
    team = Team.objects.get(pk=team_crew.team.pk)
    assert team.account_of_record_id == heir.pk
    form = Form.objects.get(pk=team_form)
    assert (form.owner_id, form.account_id) == (heir.pk, heir.pk)
    heirs_api = team_crew.api("admin")
    assert heirs_api.patch(f"/api/v1/forms/{team_form}", {"name": "Still ours"},
                           format="json").status_code == 200
    members = heirs_api.get(f"/api/v1/teams/{team.pk}/members").json()
    assert [(m["email"], m["role"]) for m in members] == [
        ("viewer@team.example", "viewer"), ("editor@team.example", "editor"),
        ("admin@team.example", "owner")]
    log = heirs_api.get(f"/api/v1/teams/{team.pk}/audit", {"action": "member.removed"})
    [removed] = log.json()["data"]
    assert (removed["actor"]["email"], removed["target"]["name"], removed["details"]) == (
        "operator@example.com", "owner@team.example",
        {"role": "owner", "accountDeleted": True})
    assert Entry.objects.get(action="member.removed").owner_id == heir.pk


def test_a_member_below_owner_is_deleted_and_leaves_the_team(admin_client, team_crew):
    editor = team_crew.users["editor"]

    assert delete_in_admin(admin_client, editor).status_code == 302

    assert not User.objects.filter(pk=editor.pk).exists()
    assert team_crew.team.memberships.count() == 3
    assert team_crew.team.memberships.filter(role=Role.OWNER).count() == 1


def test_a_deletion_that_fails_in_the_admin_leaves_the_team_as_it_was(
        admin_client, team_crew, team_form, monkeypatch):
    owner, heir = team_crew.users["owner"], team_crew.users["admin"]
    Membership.objects.filter(user=heir).update(role=Role.OWNER)
    Entry.objects.all().delete()

    def fails(*args, **kwargs):
        raise RuntimeError("the database went away")

    # The delete page's last step, after the account left its teams and went.
    monkeypatch.setattr("accounts.admin.UserAdmin.message_user", fails)
    admin_client.raise_request_exception = False

    assert delete_in_admin(admin_client, owner).status_code == 500

    assert Membership.objects.get(user=owner).role == Role.OWNER
    assert Team.objects.get(pk=team_crew.team.pk).account_of_record_id == owner.pk
    assert Form.objects.get(pk=team_form).owner_id == owner.pk
    assert not Entry.objects.exists()


@pytest.mark.parametrize("how", ["one", "selected"])
def test_an_owner_leaving_after_the_check_is_refused_without_an_error_page(
        admin_client, team_crew, team_form, how, monkeypatch):
    """The heir leaves after the POST's own check found an owner beside the one deleted,
    before the deletion: the deletion finds the account the last owner and is refused, with
    the admin's error message; nothing is deleted and nothing is recorded."""
    owner, heir = team_crew.users["owner"], team_crew.users["admin"]
    Membership.objects.filter(user=heir).update(role=Role.OWNER)
    page = admin_client.get(f"/admin/accounts/user/{owner.pk}/delete/")
    assert LAST_OWNER not in page.content.decode()
    checked = UserAdmin.get_deleted_objects

    def heir_leaves_after(admin, objs, request):
        found = checked(admin, objs, request)
        services.member_remove(team=team_crew.team, actor=heir, user_id=heir.pk)
        return found

    monkeypatch.setattr(UserAdmin, "get_deleted_objects", heir_leaves_after)
    Entry.objects.all().delete()

    response = (delete_in_admin(admin_client, owner) if how == "one"
                else delete_selected(admin_client, owner))

    assert response.status_code == 302
    shown = admin_client.get(response.url).content.decode()
    # The admin's error message (its template capitalises the first letter).
    assert f'<li class="error">O{LAST_OWNER[1:]}: make another member an owner first.' in shown
    assert User.objects.filter(pk=owner.pk).exists()
    assert Membership.objects.get(user=owner).role == Role.OWNER
    assert Form.objects.get(pk=team_form).owner_id == owner.pk
    assert not Entry.objects.filter(action__in=["account.deleted", "member.removed"]).exists()
