"""Moving a form into a team and back (PATCH /api/v1/forms/{id} {teamId}), by someone who is
admin on both sides."""

from __future__ import annotations

import pytest

from forms_app.services import form_create
from teams.models import Membership
from teams.services import team_create
from tests.conftest import make_user
from tests.teams.helpers import client_of

pytestmark = pytest.mark.django_db


def move(client, form, team_id):
    return client.patch(f"/api/v1/forms/{form.pk}", {"teamId": team_id}, format="json")


def test_an_admin_moves_their_own_form_into_the_team_and_back(team_crew):
    admin = team_crew.users["admin"]
    form = form_create(owner=admin, name="Mine")
    moved = move(team_crew.api("admin"), form, str(team_crew.team.pk))
    assert moved.status_code == 200
    assert (moved.json()["teamId"], moved.json()["role"]) == (str(team_crew.team.pk), "admin")
    assert team_crew.api("viewer").get(f"/api/v1/forms/{form.pk}").status_code == 200
    back = move(team_crew.api("admin"), form, None)
    assert back.status_code == 200
    assert (back.json()["teamId"], back.json()["role"]) == (None, "owner")
    assert team_crew.api("viewer").get(f"/api/v1/forms/{form.pk}").status_code == 404


def test_an_editor_cannot_move_their_own_form_into_the_team(team_crew):
    form = form_create(owner=team_crew.users["editor"], name="Mine")
    response = move(team_crew.api("editor"), form, str(team_crew.team.pk))
    assert response.status_code == 403
    form.refresh_from_db()
    assert form.team_id is None


def test_a_team_one_is_not_in_is_a_404(team_crew):
    form = form_create(owner=team_crew.users["outsider"], name="Mine")
    response = move(team_crew.api("outsider"), form, str(team_crew.team.pk))
    assert response.status_code == 404
    assert response.json()["error"] == "team_not_found"


def test_moving_between_teams_needs_admin_on_both(team_crew):
    other = team_create(owner=team_crew.users["owner"], name="Other")
    form = form_create(owner=team_crew.users["owner"], name="Shared", team=team_crew.team)
    Membership.objects.create(team=other, user=team_crew.users["admin"], role="editor")
    assert move(team_crew.api("admin"), form, str(other.pk)).status_code == 403
    assert move(team_crew.api("owner"), form, str(other.pk)).status_code == 200


def test_only_the_creator_takes_a_form_back(team_crew):
    form = form_create(owner=team_crew.users["owner"], name="Shared", team=team_crew.team)
    assert move(team_crew.api("admin"), form, None).status_code == 403


def test_a_personal_form_stays_its_owners_alone(db):
    owner, other = make_user("a@example.com"), make_user("b@example.com")
    form = form_create(owner=owner, name="Mine")
    assert client_of(other).get(f"/api/v1/forms/{form.pk}").status_code == 404
    listed = client_of(owner).get("/api/v1/forms").json()
    assert [(f["_id"], f["teamId"], f["role"]) for f in listed] == [(str(form.pk), None, "owner")]
