"""The API keys page with teams: a key may read one's own forms and those of the teams where
one is admin or owner (pullapi/services.py), each offered with its team named; a posted form
outside that set is refused as the API refuses it, with no key made."""

from __future__ import annotations

import pytest

from audit.models import Entry
from forms_app.services import form_create
from pullapi.models import ApiKey

pytestmark = pytest.mark.django_db

PAGE = "/dashboard/settings/api-keys"
TEAM_CHOICE = 'value="{}"'


def text(response) -> str:
    return response.content.decode()


@pytest.mark.parametrize("who", ["admin", "owner"])
def test_an_admin_or_owner_is_offered_the_team_form_with_its_team(team_crew, team_form, who):
    page = text(team_crew.browser(who).get(PAGE))

    assert TEAM_CHOICE.format(team_form.pk) in page
    assert "Agency contact · Team Agency</label>" in page


@pytest.mark.parametrize("who", ["viewer", "editor", "outsider"])
def test_below_admin_the_team_form_is_not_offered(team_crew, team_form, who):
    form_create(owner=team_crew.users[who], name="My own survey")

    page = text(team_crew.browser(who).get(PAGE))

    assert TEAM_CHOICE.format(team_form.pk) not in page
    assert "My own survey · Personal</label>" in page


@pytest.mark.parametrize("who", ["admin", "owner"])
def test_an_admin_or_owner_makes_a_key_on_the_team_form(team_crew, team_form, who):
    made = team_crew.browser(who).post(f"{PAGE}/new",
                                       {"name": "Warehouse", "forms": [str(team_form.pk)]})

    assert made.status_code == 302
    key = ApiKey.objects.get(owner=team_crew.users[who])
    assert list(key.forms.all()) == [team_form]
    assert Entry.objects.get(action="api_key.created").actor == team_crew.users[who]


@pytest.mark.parametrize("who", ["viewer", "editor"])
def test_below_admin_a_key_on_the_team_form_is_403(team_crew, team_form, who):
    made = team_crew.browser(who).post(f"{PAGE}/new",
                                       {"name": "Leak", "forms": [str(team_form.pk)]})

    assert made.status_code == 403
    assert "This needs the admin role" in text(made)
    assert not ApiKey.objects.exists()
    assert not Entry.objects.filter(action="api_key.created").exists()


def test_an_outsider_is_told_no_more_than_of_a_form_that_does_not_exist(team_crew, team_form):
    made = team_crew.browser("outsider").post(f"{PAGE}/new",
                                              {"name": "Leak", "forms": [str(team_form.pk)]})

    assert made.status_code == 400
    assert f"No form of yours is named &#x27;{team_form.pk}&#x27;" in text(made)
    assert "Agency contact" not in text(made)
    assert not ApiKey.objects.exists()


def test_the_keys_list_names_each_forms_team(team_crew, team_form):
    browser = team_crew.browser("admin")
    browser.post(f"{PAGE}/new", {"name": "Warehouse", "forms": [str(team_form.pk)]})

    listed = text(browser.get(PAGE))

    assert '<td data-label="Forms">Agency contact · Team Agency</td>' in listed


def test_a_form_the_key_no_longer_reads_is_marked_after_a_demotion(team_crew, team_form):
    """The pull API stops reading a team form the moment its key's maker drops below admin;
    the keys page says so beside the form rather than listing it as if it were read."""
    browser = team_crew.browser("admin")
    own = form_create(owner=team_crew.users["admin"], name="My own survey")
    browser.post(f"{PAGE}/new", {"name": "Warehouse", "forms": [str(team_form.pk), str(own.pk)]})
    assert "not read" not in text(browser.get(PAGE))

    owner = team_crew.api("owner")
    demoted = owner.patch(f"/api/v1/teams/{team_crew.team.pk}/members/"
                          f"{team_crew.users['admin'].pk}", {"role": "editor"}, format="json")
    assert demoted.status_code == 200
    listed = text(browser.get(PAGE))

    cell = listed[listed.index('<td data-label="Forms">'):]
    cell = cell[:cell.index("</td>")]
    assert "Agency contact · Team Agency <span" in cell and "not read" in cell
    assert cell.count("not read") == 1  # one's own form is always read
