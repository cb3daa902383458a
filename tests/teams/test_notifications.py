"""Owner notifications of a team form, per member per form (PATCH /api/v1/forms/{id}/me)."""

from __future__ import annotations

import pytest
from django.core import mail

from forms_app.services import form_create
from integrations.models import Delivery
from tests.conftest import submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def team_form(team_crew):
    return form_create(owner=team_crew.users["admin"], name="Shared", team=team_crew.team,
                       rate_limit=1000)


def notified() -> set[str]:
    return {Delivery.objects.get(pk=pk).integration.owner.email
            for pk in Delivery.objects.values_list("pk", flat=True)}


def test_the_creator_is_notified_by_default_and_others_only_when_they_ask(
        public, team_crew, team_form):
    submit(public, team_form)
    assert notified() == {team_crew.users["admin"].email}
    response = team_crew.api("viewer").patch(f"/api/v1/forms/{team_form.pk}/me",
                                             {"notify": True}, format="json")
    assert response.status_code == 200 and response.json() == {"notify": True}
    Delivery.objects.all().delete()
    submit(public, team_form, {"n": "2"})
    assert notified() == {team_crew.users["admin"].email, team_crew.users["viewer"].email}


def test_the_creator_turns_theirs_off_as_notify_owner(team_crew, team_form):
    response = team_crew.api("admin").patch(f"/api/v1/forms/{team_form.pk}/me",
                                            {"notify": False}, format="json")
    assert response.status_code == 200
    team_form.refresh_from_db()
    assert team_form.notify_owner is False


def test_a_removed_member_is_no_longer_notified(public, team_crew, team_form):
    team_crew.api("editor").patch(f"/api/v1/forms/{team_form.pk}/me", {"notify": True},
                                  format="json")
    path = f"/api/v1/teams/{team_crew.team.pk}/members/{team_crew.users['editor'].pk}"
    assert team_crew.api("owner").delete(path).status_code == 204
    submit(public, team_form)
    assert notified() == {team_crew.users["admin"].email}


def test_a_non_member_is_404(team_crew, team_form):
    response = team_crew.api("outsider").patch(f"/api/v1/forms/{team_form.pk}/me",
                                               {"notify": True}, format="json")
    assert response.status_code == 404
    assert mail.outbox == []


def test_an_empty_patch_answers_the_current_setting(team_crew, team_form):
    path = f"/api/v1/forms/{team_form.pk}/me"
    assert team_crew.api("admin").patch(path, {}, format="json").json() == {"notify": True}
    assert team_crew.api("viewer").patch(path, {}, format="json").json() == {"notify": False}
