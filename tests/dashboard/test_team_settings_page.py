"""A team's settings on its page: renaming (admin and owner), handing the account of record
to another owner (owner), deleting the team (owner, once it has no forms). Each button shown
only to the roles that may use it; each post refused to the others with nothing changed, and
recorded in the team's log when done (teams/services.py)."""

from __future__ import annotations

import pytest

from audit.models import Entry
from forms_app.models import Form
from forms_app.services import form_create
from teams.models import Membership, Team
from teams.roles import Role

pytestmark = pytest.mark.django_db

RENAME = "Rename the team"
HAND_OVER = "Hand it over"
DELETE = "Delete the team</button>"


def text(response) -> str:
    return response.content.decode().replace("<wbr>", "")


def base(crew) -> str:
    return f"/dashboard/teams/{crew.team.pk}"


def second_owner(crew) -> None:
    Membership.objects.filter(team=crew.team, user=crew.users["admin"]).update(role=Role.OWNER)


@pytest.mark.parametrize("who", ["viewer", "editor"])
def test_below_admin_no_setting_is_offered(team_crew, who):
    page = text(team_crew.browser(who).get(base(team_crew)))

    assert RENAME not in page and HAND_OVER not in page and DELETE not in page
    assert "Account of record: owner@team.example" in page


def test_an_admin_is_offered_the_rename_only(team_crew):
    page = text(team_crew.browser("admin").get(base(team_crew)))

    assert RENAME in page
    assert HAND_OVER not in page and DELETE not in page


def test_an_owner_is_offered_everything(team_crew):
    second_owner(team_crew)

    page = text(team_crew.browser("owner").get(base(team_crew)))

    assert RENAME in page and HAND_OVER in page and DELETE in page
    assert 'value="' + str(team_crew.users["admin"].pk) + '">admin@team.example' in page


def test_a_sole_owner_is_told_how_to_hand_it_over(team_crew):
    page = text(team_crew.browser("owner").get(base(team_crew)))

    assert HAND_OVER not in page and "Make another member an owner" in page


# --- Renaming ------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["admin", "owner"])
def test_an_admin_or_owner_renames_the_team(team_crew, who):
    renamed = team_crew.browser(who).post(f"{base(team_crew)}/rename", {"name": "Agency Ltd"})

    assert renamed.status_code == 302 and renamed["Location"] == base(team_crew)
    assert Team.objects.get(pk=team_crew.team.pk).name == "Agency Ltd"
    entry = Entry.objects.get(action="team.changed")
    assert entry.actor == team_crew.users[who] and entry.details == {"changed": ["name"]}


@pytest.mark.parametrize("who", ["viewer", "editor"])
def test_a_rename_below_admin_is_403(team_crew, who):
    renamed = team_crew.browser(who).post(f"{base(team_crew)}/rename", {"name": "Hijacked"})

    assert renamed.status_code == 403
    assert Team.objects.get(pk=team_crew.team.pk).name == "Agency"
    assert not Entry.objects.filter(action="team.changed").exists()


def test_an_empty_name_is_refused_with_its_reason(team_crew):
    renamed = team_crew.browser("admin").post(f"{base(team_crew)}/rename", {"name": ""},
                                              follow=True)

    assert "Name: This field is required." in text(renamed)
    assert Team.objects.get(pk=team_crew.team.pk).name == "Agency"


# --- The account of record -----------------------------------------------------------------


def test_an_owner_hands_the_account_of_record_to_another_owner(team_crew):
    second_owner(team_crew)
    form = form_create(owner=team_crew.users["owner"], name="Contact", team=team_crew.team)
    admin = team_crew.users["admin"]

    handed = team_crew.browser("owner").post(f"{base(team_crew)}/account",
                                             {"accountOfRecord": str(admin.pk)})

    assert handed.status_code == 302
    assert Team.objects.get(pk=team_crew.team.pk).account_of_record_id == admin.pk
    assert Form.objects.get(pk=form.pk).account_id == admin.pk
    assert Entry.objects.get(action="team.changed").details == {"changed": ["accountOfRecord"]}


def test_the_account_of_record_goes_only_to_an_owner(team_crew):
    handed = team_crew.browser("owner").post(
        f"{base(team_crew)}/account", {"accountOfRecord": str(team_crew.users["editor"].pk)},
        follow=True)

    assert "Choose an owner of this team." in text(handed)
    assert Team.objects.get(pk=team_crew.team.pk).account_of_record == team_crew.users["owner"]


@pytest.mark.parametrize("who", ["viewer", "editor", "admin"])
def test_handing_over_below_owner_is_403(team_crew, who):
    handed = team_crew.browser(who).post(f"{base(team_crew)}/account",
                                         {"accountOfRecord": str(team_crew.users[who].pk)})

    assert handed.status_code == 403
    assert Team.objects.get(pk=team_crew.team.pk).account_of_record == team_crew.users["owner"]


# --- Deleting ------------------------------------------------------------------------------


def test_an_owner_deletes_a_team_without_forms(team_crew):
    deleted = team_crew.browser("owner").post(f"{base(team_crew)}/delete")

    assert deleted.status_code == 302 and deleted["Location"] == "/dashboard/teams"
    assert not Team.objects.filter(pk=team_crew.team.pk).exists()
    assert Entry.objects.filter(action="team.deleted", team_id=team_crew.team.pk).exists()


def test_a_team_with_forms_is_kept_and_the_owner_told_what_to_do(team_crew):
    form_create(owner=team_crew.users["owner"], name="Contact", team=team_crew.team)

    deleted = team_crew.browser("owner").post(f"{base(team_crew)}/delete", follow=True)

    assert "The team still has 1 form. Move each one to another team" in text(deleted)
    assert Team.objects.filter(pk=team_crew.team.pk).exists()
    assert not Entry.objects.filter(action="team.deleted").exists()


@pytest.mark.parametrize("who", ["viewer", "editor", "admin"])
def test_a_delete_below_owner_is_403(team_crew, who):
    deleted = team_crew.browser(who).post(f"{base(team_crew)}/delete")

    assert deleted.status_code == 403
    assert Team.objects.filter(pk=team_crew.team.pk).exists()


@pytest.mark.parametrize("action", ["rename", "account", "delete"])
def test_an_outsider_gets_404(team_crew, action):
    answer = team_crew.browser("outsider").post(f"{base(team_crew)}/{action}",
                                                {"name": "Mine", "accountOfRecord": "x"})

    assert answer.status_code == 404
    team = Team.objects.get(pk=team_crew.team.pk)
    assert team.name == "Agency" and team.account_of_record == team_crew.users["owner"]
