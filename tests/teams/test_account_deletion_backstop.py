"""An account deleted outside the admin (a queryset, the shell). Django collects what a
deletion takes before pre_delete runs, so the team forms the account made would go with it:
such a deletion is refused, and the team keeps its forms. An account that made none leaves its
teams as a removed member does."""

from __future__ import annotations

import pytest
from django.db import transaction

from accounts.models import User
from core.errors import ServiceError
from forms_app.models import Form
from teams.models import Membership, Team

pytestmark = pytest.mark.django_db


def test_a_queryset_deletion_of_an_account_that_made_team_forms_is_refused(team_crew):
    owner, heir = team_crew.users["owner"], team_crew.users["admin"]
    api = team_crew.api("owner")
    assert api.patch(f"/api/v1/teams/{team_crew.team.pk}/members/{heir.pk}", {"role": "owner"},
                     format="json").status_code == 200
    made = api.post("/api/v1/forms", {"name": "Leads", "teamId": str(team_crew.team.pk)},
                    format="json")
    assert made.status_code == 201

    with pytest.raises(ServiceError) as refused, transaction.atomic():
        User.objects.filter(pk=owner.pk).delete()

    assert refused.value.code == "team_forms"
    assert "Agency" in refused.value.message
    assert User.objects.filter(pk=owner.pk).exists()
    assert Form.objects.filter(pk=made.json()["_id"], owner=owner).exists()
    assert Team.objects.get(pk=team_crew.team.pk).account_of_record_id == owner.pk


def test_a_queryset_deletion_of_a_member_who_made_no_team_form_leaves_the_team(team_crew):
    editor = team_crew.users["editor"]

    User.objects.filter(pk=editor.pk).delete()

    assert not User.objects.filter(pk=editor.pk).exists()
    assert not Membership.objects.filter(user_id=editor.pk).exists()
    assert Membership.objects.filter(team=team_crew.team, role="owner").exists()
