"""API keys read only the forms their maker may make keys for now: a removed or demoted
member's keys lose the team's forms at the next request."""

from __future__ import annotations

import pytest

from forms_app import access
from forms_app.services import form_create
from pullapi.models import ApiKey
from pullapi.services import readable_form
from teams.models import Membership
from teams.roles import Role
from tests.conftest import CommitClient, add_submission, create_key, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def keyed(team_crew):
    form = form_create(owner=team_crew.users["owner"], name="Shared", team=team_crew.team,
                       notify_owner=False)
    add_submission(form, {"name": "Ada"})
    key = create_key(team_crew.users["admin"], [form])
    puller = CommitClient()
    puller.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return team_crew, form, puller


def pulled(puller, form) -> int:
    return puller.get("/api/v1/submissions", {"formId": str(form.pk)}).status_code


def test_an_admins_key_reads_the_team_form(keyed):
    _, form, puller = keyed
    assert pulled(puller, form) == 200


def test_a_removed_members_key_loses_the_form_at_once(keyed):
    crew, form, puller = keyed
    path = f"/api/v1/teams/{crew.team.pk}/members/{crew.users['admin'].pk}"
    assert crew.api("owner").delete(path).status_code == 204
    assert pulled(puller, form) == 404


def test_a_member_demoted_below_admin_loses_the_form_at_once(keyed):
    crew, form, puller = keyed
    path = f"/api/v1/teams/{crew.team.pk}/members/{crew.users['admin'].pk}"
    crew.api("owner").patch(path, {"role": "editor"}, format="json")
    assert pulled(puller, form) == 404
    crew.api("owner").patch(path, {"role": "admin"}, format="json")
    assert pulled(puller, form) == 200


def test_a_creators_key_loses_a_form_moved_into_a_team_they_are_not_admin_of(team_crew):
    creator = team_crew.users["editor"]
    form = form_create(owner=creator, name="Mine", notify_owner=False)
    key = create_key(creator, [form])
    puller = CommitClient()
    puller.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert pulled(puller, form) == 200
    form.team = team_crew.team
    form.save()
    assert pulled(puller, form) == 404


@pytest.mark.parametrize("role", [None, *Role])
def test_what_a_key_reads_is_the_makers_admin_reach(team_crew, role):
    """The pull API's SQL (pullapi/services.py) and forms_app/access.py say the same."""
    maker = make_user("maker@example.com")
    if role is not None:
        Membership.objects.create(team=team_crew.team, user=maker, role=role)
    own = form_create(owner=maker, name="Own", notify_owner=False)
    theirs = form_create(owner=team_crew.users["owner"], name="Team", team=team_crew.team,
                         notify_owner=False)
    stranger = form_create(owner=team_crew.users["outsider"], name="Other",
                           notify_owner=False)
    forms = [own, theirs, stranger]
    create_key(maker, [own])
    key_row = ApiKey.objects.get(owner=maker)
    key_row.forms.set(forms)  # as an operator could, in the admin
    by_sql = {form.pk for form in forms if readable_form(api_key=key_row,
                                                         identifier=str(form.pk))}
    by_python = set(access.reachable(maker, Role.ADMIN).values_list("pk", flat=True))
    assert by_sql == by_python & {form.pk for form in forms}
