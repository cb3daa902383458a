"""Teams, members and the last-owner rule over HTTP (contract, "Teams, roles and the audit
log")."""

from __future__ import annotations

import pytest

from forms_app.services import form_create
from teams.models import Membership, Team
from tests.teams.helpers import ROLES, client_of

pytestmark = pytest.mark.django_db


def test_creating_a_team_makes_the_caller_its_owner(owner_api, user):
    response = owner_api.post("/api/v1/teams", {"name": "Agency"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"_id", "name", "createdAt", "role", "accountOfRecord"}
    assert (body["name"], body["role"], body["accountOfRecord"]) == ("Agency", "owner",
                                                                      str(user.pk))
    assert owner_api.get("/api/v1/teams").json() == [body]


def test_a_team_lists_with_each_callers_role(team_crew):
    for role in ROLES:
        listed = team_crew.api(role).get("/api/v1/teams").json()
        assert [(team["_id"], team["role"]) for team in listed] == [(str(team_crew.team.pk), role)]


def test_an_outsider_gets_404_on_every_team_path(team_crew):
    outsider = team_crew.api("outsider")
    base = f"/api/v1/teams/{team_crew.team.pk}"
    assert outsider.get("/api/v1/teams").json() == []
    for method, path in [("get", base), ("patch", base), ("delete", base),
                         ("get", f"{base}/members"), ("get", f"{base}/invitations"),
                         ("post", f"{base}/invitations")]:
        body = {"name": "X"} if method == "patch" else {"email": "a@b.example", "role": "viewer"}
        response = getattr(outsider, method)(path, body, format="json")
        assert response.status_code == 404, (method, path)
        assert response.json()["error"] == "not_found"


def test_a_team_that_is_not_an_id_is_404(owner_api):
    assert owner_api.get("/api/v1/teams/nope").status_code == 404


@pytest.mark.parametrize("role,status", [("viewer", 403), ("editor", 403), ("admin", 200),
                                         ("owner", 200)])
def test_renaming_needs_admin(team_crew, role, status):
    response = team_crew.api(role).patch(f"/api/v1/teams/{team_crew.team.pk}",
                                         {"name": "Renamed"}, format="json")
    assert response.status_code == status
    if status == 403:
        assert response.json()["error"] == "forbidden"


@pytest.mark.parametrize("role,status", [("viewer", 403), ("editor", 403), ("admin", 403),
                                         ("owner", 204)])
def test_deleting_a_team_needs_owner(team_crew, role, status):
    response = team_crew.api(role).delete(f"/api/v1/teams/{team_crew.team.pk}")
    assert response.status_code == status
    assert Team.objects.filter(pk=team_crew.team.pk).exists() == (status != 204)


def test_a_team_with_forms_is_not_deleted(team_crew):
    form_create(owner=team_crew.users["owner"], name="Shared", team=team_crew.team)
    response = team_crew.api("owner").delete(f"/api/v1/teams/{team_crew.team.pk}")
    assert response.status_code == 409
    assert response.json()["error"] == "team_not_empty"


def test_members_list_with_roles(team_crew):
    members = team_crew.api("viewer").get(f"/api/v1/teams/{team_crew.team.pk}/members").json()
    assert [(m["email"], m["role"]) for m in members] == [
        (team_crew.users[role].email, role) for role in ("owner", "viewer", "editor", "admin")]
    assert set(members[0]) == {"userId", "email", "role", "joinedAt"}


def _role_path(crew, who: str) -> str:
    return f"/api/v1/teams/{crew.team.pk}/members/{crew.users[who].pk}"


@pytest.mark.parametrize("role", ["viewer", "editor"])
def test_below_admin_nobody_changes_roles(team_crew, role):
    response = team_crew.api(role).patch(_role_path(team_crew, "viewer"), {"role": "editor"},
                                         format="json")
    assert response.status_code == 403


def test_an_admin_changes_roles_below_owner_only(team_crew):
    admin = team_crew.api("admin")
    ok = admin.patch(_role_path(team_crew, "viewer"), {"role": "editor"}, format="json")
    assert ok.status_code == 200 and ok.json()["role"] == "editor"
    assert admin.patch(_role_path(team_crew, "viewer"), {"role": "owner"},
                       format="json").status_code == 403
    assert admin.patch(_role_path(team_crew, "owner"), {"role": "viewer"},
                       format="json").status_code == 403
    assert admin.delete(_role_path(team_crew, "owner")).status_code == 403


def test_an_admin_removes_a_member(team_crew):
    assert team_crew.api("admin").delete(_role_path(team_crew, "editor")).status_code == 204
    assert not Membership.objects.filter(user=team_crew.users["editor"]).exists()


def test_a_member_leaves(team_crew):
    assert team_crew.api("viewer").delete(_role_path(team_crew, "viewer")).status_code == 204
    assert team_crew.api("viewer").get(f"/api/v1/teams/{team_crew.team.pk}").status_code == 404


def test_the_last_owner_can_neither_leave_nor_be_demoted(team_crew):
    owner = team_crew.api("owner")
    left = owner.delete(_role_path(team_crew, "owner"))
    assert left.status_code == 409 and left.json()["error"] == "last_owner"
    demoted = owner.patch(_role_path(team_crew, "owner"), {"role": "admin"}, format="json")
    assert demoted.status_code == 409
    assert Membership.objects.get(user=team_crew.users["owner"]).role == "owner"


def test_with_a_second_owner_the_first_leaves_and_hands_on_the_account(team_crew):
    owner = team_crew.api("owner")
    owner.patch(_role_path(team_crew, "admin"), {"role": "owner"}, format="json")
    assert owner.delete(_role_path(team_crew, "owner")).status_code == 204
    team_crew.team.refresh_from_db()
    assert team_crew.team.account_of_record == team_crew.users["admin"]


def test_the_account_of_record_goes_only_to_an_owner_by_an_owner(team_crew):
    path = f"/api/v1/teams/{team_crew.team.pk}"
    admin_id = str(team_crew.users["admin"].pk)
    by_admin = team_crew.api("admin").patch(path, {"accountOfRecord": admin_id}, format="json")
    assert by_admin.status_code == 403
    to_admin = team_crew.api("owner").patch(path, {"accountOfRecord": admin_id}, format="json")
    assert to_admin.status_code == 400
    assert "accountOfRecord" in to_admin.json()["details"]
    Membership.objects.filter(user=team_crew.users["admin"]).update(role="owner")
    handed = team_crew.api("owner").patch(path, {"accountOfRecord": admin_id}, format="json")
    assert handed.status_code == 200 and handed.json()["accountOfRecord"] == admin_id


def test_an_unknown_member_is_404(team_crew):
    path = f"/api/v1/teams/{team_crew.team.pk}/members/{team_crew.users['outsider'].pk}"
    assert team_crew.api("owner").delete(path).status_code == 404
    assert team_crew.api("owner").delete(path[:-5] + "nope").status_code == 404


def test_anonymous_is_401(api, team_crew):
    assert api.get("/api/v1/teams").status_code == 401
    assert client_of(team_crew.users["owner"]).get("/api/v1/teams").status_code == 200


def test_an_empty_role_patch_changes_nothing(team_crew):
    response = team_crew.api("viewer").patch(_role_path(team_crew, "editor"), {}, format="json")
    assert response.status_code == 200 and response.json()["role"] == "editor"
