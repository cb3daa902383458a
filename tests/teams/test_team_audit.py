"""A team's audit log: GET /api/v1/teams/{id}/audit (admin and owner) holds what happens to
the team, its members and its forms; a creator's own log does not."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from audit.models import Entry
from tests.teams.helpers import client_of

pytestmark = pytest.mark.django_db


def team_log(crew, who="admin", **query):
    response = crew.api(who).get(f"/api/v1/teams/{crew.team.pk}/audit", {"limit": 100, **query})
    assert response.status_code == 200, response.content
    return response.json()["data"]


def actions(entries) -> list[str]:
    return [entry["action"] for entry in entries]


def test_the_teams_members_come_and_go_in_its_log(team_crew):
    base = f"/api/v1/teams/{team_crew.team.pk}"
    admin = team_crew.api("admin")
    assert admin.post(f"{base}/invitations", {"email": "new@example.com", "role": "viewer"},
                      format="json").status_code == 201
    token = re.search(r"/dashboard/invitations/(\S+)", mail.outbox[-1].body).group(1)
    from tests.conftest import make_user
    newcomer = make_user("new@example.com")
    assert client_of(newcomer).post("/api/v1/invitations/accept", {"token": token},
                                    format="json").status_code == 200
    assert admin.patch(f"{base}/members/{newcomer.pk}", {"role": "editor"},
                       format="json").status_code == 200
    assert admin.delete(f"{base}/members/{team_crew.users['viewer'].pk}").status_code == 204
    assert team_crew.api("editor").delete(
        f"{base}/members/{team_crew.users['editor'].pk}").status_code == 204

    log = team_log(team_crew)

    assert actions(log)[:5] == ["member.left", "member.removed", "member.role_changed",
                                "member.joined", "member.invited"]
    left, removed, changed, joined, invited = log[:5]
    assert left["actor"]["email"] == "editor@team.example"
    assert removed["target"] == {"type": "member", "_id": str(team_crew.users["viewer"].pk),
                                 "name": "viewer@team.example"}
    assert changed["details"] == {"from": "viewer", "to": "editor"}
    assert joined["actor"]["_id"] == str(newcomer.pk)
    assert invited["details"] == {"role": "viewer"} and token not in str(invited)


def test_a_team_forms_changes_are_in_the_teams_log_not_its_creators(team_crew):
    admin = team_crew.api("admin")
    created = admin.post("/api/v1/forms", {"name": "Leads", "teamId": str(team_crew.team.pk)},
                         format="json")
    assert created.status_code == 201
    form_id = created.json()["_id"]
    assert team_crew.api("editor").patch(f"/api/v1/forms/{form_id}", {"rateLimit": 30},
                                         format="json").status_code == 200

    log = team_log(team_crew, action="form")

    assert actions(log) == ["form.changed", "form.created"]
    assert log[0]["details"] == {"changed": ["rateLimit"]}
    own = admin.get("/api/v1/audit", {"action": "form"}).json()["data"]
    assert own == []


def test_a_move_is_in_the_log_of_both_sides(team_crew):
    owner = team_crew.api("owner")
    form_id = owner.post("/api/v1/forms", {"name": "Mine"}, format="json").json()["_id"]
    moved = owner.patch(f"/api/v1/forms/{form_id}", {"teamId": str(team_crew.team.pk)},
                        format="json")
    assert moved.status_code == 200

    in_team = team_log(team_crew, action="form.moved")
    in_own = owner.get("/api/v1/audit", {"action": "form.moved"}).json()["data"]

    assert len(in_team) == len(in_own) == 1
    assert in_team[0]["details"] == {"from": None, "to": str(team_crew.team.pk)}


def test_renaming_the_team_is_logged_by_its_setting(team_crew):
    assert team_crew.api("admin").patch(f"/api/v1/teams/{team_crew.team.pk}",
                                        {"name": "Studio"}, format="json").status_code == 200

    assert team_log(team_crew, action="team.changed")[0]["details"] == {"changed": ["name"]}


@pytest.mark.parametrize("who, status", [("viewer", 403), ("editor", 403), ("admin", 200),
                                         ("owner", 200), ("outsider", 404)])
def test_the_team_log_is_for_admins_and_owners(team_crew, who, status):
    response = team_crew.api(who).get(f"/api/v1/teams/{team_crew.team.pk}/audit")

    assert response.status_code == status


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_no_request_changes_the_team_log(team_crew, method):
    count = Entry.objects.count()

    response = getattr(team_crew.api("owner"), method)(
        f"/api/v1/teams/{team_crew.team.pk}/audit", {}, format="json")

    assert response.status_code == 405
    assert Entry.objects.count() == count


def test_a_cursor_of_another_log_is_refused(team_crew):
    for name in ("A", "B", "C"):
        team_crew.api("admin").post("/api/v1/forms", {"name": name}, format="json")
    own = team_crew.api("admin").get("/api/v1/audit", {"limit": 1}).json()
    assert own["nextCursor"]

    response = team_crew.api("admin").get(f"/api/v1/teams/{team_crew.team.pk}/audit",
                                          {"cursor": own["nextCursor"]})

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_parameter"


def test_a_team_that_cannot_be_deleted_logs_nothing(team_crew):
    team_crew.api("admin").post("/api/v1/forms", {"name": "Kept",
                                                  "teamId": str(team_crew.team.pk)},
                                format="json")

    response = team_crew.api("owner").delete(f"/api/v1/teams/{team_crew.team.pk}")

    assert response.status_code == 409
    assert not Entry.objects.filter(action="team.deleted").exists()


def test_a_team_forms_submissions_and_integrations_are_in_the_teams_log(team_crew, settings):
    from forms_app.models import Form
    from tests.conftest import add_submission

    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    editor = team_crew.api("editor")
    form_id = team_crew.api("admin").post(
        "/api/v1/forms", {"name": "Leads", "teamId": str(team_crew.team.pk)},
        format="json").json()["_id"]
    submission = add_submission(Form.objects.get(pk=form_id), {"email": "a@example.com"})
    assert editor.delete(
        f"/api/v1/forms/{form_id}/submissions/{submission.pk}").status_code == 204
    assert editor.post("/api/v1/integrations", {
        "type": "WEBHOOK", "formId": form_id,
        "config": {"url": "https://hooks.example.com/in"}}, format="json").status_code == 201

    log = actions(team_log(team_crew))

    assert "submissions.deleted" in log and "integration.created" in log
    assert team_crew.api("editor").get("/api/v1/audit").json()["data"] == []
