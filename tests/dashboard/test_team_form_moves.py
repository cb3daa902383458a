"""Moving a form between one's own forms and teams from its settings page: offered and
allowed only to an admin of both sides (the API's rule), through the service that records it
in the log of each side."""

from __future__ import annotations

import pytest

from audit.models import Entry
from forms_app.models import Form
from forms_app.services import form_create
from teams.models import Membership
from teams.roles import Role
from teams.services import team_create

pytestmark = pytest.mark.django_db

MOVE = 'action="/dashboard/forms/{}/move"'


def text(response) -> str:
    return response.content.decode()


@pytest.fixture
def studio(team_crew):
    """A second team where the admin of Agency is an owner, and the editor an admin."""
    team = team_create(owner=team_crew.users["admin"], name="Studio")
    Membership.objects.create(team=team, user=team_crew.users["editor"], role=Role.ADMIN)
    return team


@pytest.mark.parametrize("who", ["viewer", "editor"])
def test_below_admin_no_move_is_offered_and_a_move_is_403(team_crew, team_form, studio, who):
    browser = team_crew.browser(who)

    page = text(browser.get(f"/dashboard/forms/{team_form.pk}/settings"))
    moved = browser.post(f"/dashboard/forms/{team_form.pk}/move", {"team": str(studio.pk)})

    assert MOVE.format(team_form.pk) not in page
    assert moved.status_code == 403
    assert Form.objects.get(pk=team_form.pk).team_id == team_crew.team.pk
    assert not Entry.objects.filter(action="form.moved").exists()


def test_an_outsider_gets_404_on_a_move(team_crew, team_form):
    moved = team_crew.browser("outsider").post(f"/dashboard/forms/{team_form.pk}/move",
                                               {"team": "personal"})

    assert moved.status_code == 404
    assert Form.objects.get(pk=team_form.pk).team_id == team_crew.team.pk


def test_an_admin_is_offered_the_teams_they_administer(team_crew, team_form, studio):
    third = team_create(owner=team_crew.users["outsider"], name="Elsewhere")
    Membership.objects.create(team=third, user=team_crew.users["admin"], role=Role.EDITOR)

    page = text(team_crew.browser("admin").get(f"/dashboard/forms/{team_form.pk}/settings"))

    assert MOVE.format(team_form.pk) in page
    assert f'<option value="{team_crew.team.pk}" selected>Team Agency</option>' in page
    assert f'<option value="{studio.pk}">Team Studio</option>' in page
    assert "Team Elsewhere" not in page  # an editor there
    assert 'value="personal"' not in page  # only the creator takes it back


def test_an_admin_moves_a_form_to_another_team_they_administer(team_crew, team_form, studio):
    moved = team_crew.browser("admin").post(f"/dashboard/forms/{team_form.pk}/move",
                                            {"team": str(studio.pk)})

    assert moved.status_code == 302
    form = Form.objects.get(pk=team_form.pk)
    assert form.team_id == studio.pk and form.account_id == team_crew.users["admin"].pk
    entries = Entry.objects.filter(action="form.moved", actor=team_crew.users["admin"])
    assert {entry.team_id for entry in entries} == {team_crew.team.pk, studio.pk}


def test_a_move_into_a_team_where_one_is_below_admin_is_403(team_crew, team_form):
    third = team_create(owner=team_crew.users["outsider"], name="Elsewhere")
    Membership.objects.create(team=third, user=team_crew.users["admin"], role=Role.EDITOR)

    moved = team_crew.browser("admin").post(f"/dashboard/forms/{team_form.pk}/move",
                                            {"team": str(third.pk)})

    assert moved.status_code == 403
    assert Form.objects.get(pk=team_form.pk).team_id == team_crew.team.pk


@pytest.mark.parametrize("team", ["not-a-team", "00000000-0000-0000-0000-000000000000"])
def test_a_move_into_a_team_one_is_not_in_is_404(team_crew, team_form, team):
    moved = team_crew.browser("admin").post(f"/dashboard/forms/{team_form.pk}/move",
                                            {"team": team})

    assert moved.status_code == 404
    assert Form.objects.get(pk=team_form.pk).team_id == team_crew.team.pk


def test_an_admin_who_did_not_create_it_cannot_take_it_out_of_the_team(team_crew, team_form):
    moved = team_crew.browser("admin").post(f"/dashboard/forms/{team_form.pk}/move",
                                            {"team": "personal"})

    assert moved.status_code == 403
    assert Form.objects.get(pk=team_form.pk).team_id == team_crew.team.pk


def test_the_creator_takes_it_back_to_their_own_forms(team_crew, team_form):
    browser = team_crew.browser("owner")

    page = text(browser.get(f"/dashboard/forms/{team_form.pk}/settings"))
    moved = browser.post(f"/dashboard/forms/{team_form.pk}/move", {"team": "personal"})

    assert 'value="personal">Personal' in page
    assert moved.status_code == 302
    assert Form.objects.get(pk=team_form.pk).team_id is None
    assert Entry.objects.filter(action="form.moved", team_id=team_crew.team.pk).exists()


def test_ones_own_form_moves_into_a_team_one_administers(team_crew):
    own = form_create(owner=team_crew.users["admin"], name="Side project")

    moved = team_crew.browser("admin").post(f"/dashboard/forms/{own.pk}/move",
                                            {"team": str(team_crew.team.pk)})

    assert moved.status_code == 302
    assert Form.objects.get(pk=own.pk).team_id == team_crew.team.pk


def test_a_move_to_where_it_is_records_nothing(team_crew, team_form):
    moved = team_crew.browser("owner").post(f"/dashboard/forms/{team_form.pk}/move",
                                            {"team": str(team_crew.team.pk)})

    assert moved.status_code == 302
    assert not Entry.objects.filter(action="form.moved").exists()



def test_no_move_is_offered_where_there_is_nowhere_else_to_go(team_crew):
    own = form_create(owner=team_crew.users["outsider"], name="Side project")

    page = text(team_crew.browser("outsider").get(f"/dashboard/forms/{own.pk}/settings"))

    assert MOVE.format(own.pk) not in page
