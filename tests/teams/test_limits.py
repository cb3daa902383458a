"""A team form's submissions count on the team's account of record (contract, "Limits"),
with no query more on the public endpoint than a personal form's."""

from __future__ import annotations

import pytest

from accounts import quota
from forms_app.services import form_create
from integrations.models import Delivery
from integrations.services import integration_create
from teams.models import Membership
from tests.conftest import submit
from tests.submissions.test_public_endpoint import queries_per_submission

pytestmark = pytest.mark.django_db


@pytest.fixture
def team_form(team_crew):
    # Made by the admin: its submissions still count on the owner, the account of record.
    return form_create(owner=team_crew.users["admin"], name="Shared", team=team_crew.team,
                       notify_owner=False, rate_limit=1000)


def test_submissions_count_on_the_account_of_record(public, team_crew, team_form):
    assert submit(public, team_form).status_code == 200
    assert quota.used(team_crew.users["owner"].pk) == 1
    assert quota.used(team_crew.users["admin"].pk) == 0


def test_the_account_of_records_limit_applies(public, team_crew, team_form):
    owner = team_crew.users["owner"]
    owner.monthly_submission_limit = 1
    owner.save()
    assert submit(public, team_form, {"n": "1"}).status_code == 200
    response = submit(public, team_form, {"n": "2"})
    assert response.status_code == 403
    assert response.json()["error"] == "monthly_limit_reached"


def test_handing_the_account_to_another_owner_moves_the_count(public, team_crew, team_form):
    admin = team_crew.users["admin"]
    Membership.objects.filter(user=admin).update(role="owner")
    response = team_crew.api("owner").patch(f"/api/v1/teams/{team_crew.team.pk}",
                                            {"accountOfRecord": str(admin.pk)}, format="json")
    assert response.status_code == 200
    submit(public, team_form)
    assert quota.used(admin.pk) == 1
    assert quota.used(team_crew.users["owner"].pk) == 0


def test_a_form_moved_back_counts_on_its_creator(public, team_crew, team_form):
    admin = team_crew.api("admin")
    assert admin.patch(f"/api/v1/forms/{team_form.pk}", {"teamId": None},
                       format="json").status_code == 200
    submit(public, team_form)
    assert quota.used(team_crew.users["admin"].pk) == 1


def test_me_keeps_its_shape(team_crew):
    body = team_crew.api("admin").get("/api/auth/me").json()
    assert "teams" not in body and "role" not in body


def test_a_team_form_costs_no_query_more(public, team_form, django_assert_num_queries):
    submit(public, team_form, {"name": "Ada", "email": "a@example.com"})
    team_form.refresh_from_db()
    with django_assert_num_queries(queries_per_submission()):
        assert submit(public, team_form, {"name": "Grace",
                                          "email": "g@example.com"}).status_code == 200


def test_a_team_form_gets_its_own_integrations_not_its_creators_account_wide_ones(
        public, team_crew, team_form, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    settings.CELERY_TASK_ALWAYS_EAGER = False
    creators = integration_create(owner=team_crew.users["admin"], type="WEBHOOK",
                                  config={"url": "http://127.0.0.1:1/"})
    on_form = integration_create(owner=team_crew.users["editor"], type="WEBHOOK",
                                 config={"url": "http://127.0.0.1:2/"},
                                 form_id=str(team_form.pk))
    submit(public, team_form)
    assert list(Delivery.objects.values_list("integration", flat=True)) == [on_form.pk]
    assert creators.pk != on_form.pk
