"""Every endpoint family that reaches a form, for each role on the form's team and for a
non-member: no role is 404 (as another user's form), a role too low 403 forbidden."""

from __future__ import annotations

import pytest
from django.utils import timezone

from forms_app.models import Form
from forms_app.services import form_create
from integrations.models import Delivery
from integrations.services import integration_create
from submissions.models import Submission
from tests.conftest import add_submission
from tests.teams.helpers import ROLES

pytestmark = pytest.mark.django_db

WHO = ("outsider", *ROLES)
# The lowest role each operation needs; None: any role.
NEEDS = {"viewer": 0, "editor": 1, "admin": 2, "owner": 3}


def expected(who: str, needed: str, ok: int) -> int:
    if who == "outsider":
        return 404
    return ok if ROLES.index(who) >= NEEDS[needed] else 403


@pytest.fixture
def shared(team_crew):
    form = form_create(owner=team_crew.users["admin"], name="Shared", team=team_crew.team,
                       notify_owner=False)
    submission = add_submission(form, {"email": "ada@example.com"})
    return team_crew, form, submission


def _call(client, method, path, body=None):
    return getattr(client, method)(path, body, format="json") if body is not None else getattr(
        client, method)(path)


READS = [
    ("get", "/api/v1/forms/{form}"),
    ("get", "/api/v1/forms/{form}/submissions"),
    ("get", "/api/v1/forms/{form}/export?format=csv"),
    ("get", "/api/v1/forms/{form}/submissions/{submission}/deliveries"),
]


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("method,path", READS)
def test_reading_needs_a_viewer(shared, who, method, path):
    crew, form, submission = shared
    response = _call(crew.api(who), method, path.format(form=form.pk, submission=submission.pk))
    assert response.status_code == expected(who, "viewer", 200), response.content


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("move", ["spam", "not-spam"])
def test_marking_spam_needs_an_editor(shared, who, move):
    crew, form, submission = shared
    response = crew.api(who).post(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}/{move}")
    assert response.status_code == expected(who, "editor", 200)
    if response.status_code == 403:
        assert response.json()["error"] == "forbidden"


@pytest.mark.parametrize("who", WHO)
def test_deleting_a_submission_needs_an_editor(shared, who):
    crew, form, submission = shared
    response = crew.api(who).delete(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}")
    assert response.status_code == expected(who, "editor", 204)
    assert Submission.objects.filter(pk=submission.pk).exists() == (response.status_code != 204)


@pytest.mark.parametrize("who", WHO)
def test_changing_settings_needs_an_editor(shared, who):
    crew, form, _ = shared
    response = crew.api(who).patch(f"/api/v1/forms/{form.pk}", {"name": "Renamed"},
                                   format="json")
    assert response.status_code == expected(who, "editor", 200)
    form.refresh_from_db()
    assert (form.name == "Renamed") == (response.status_code == 200)


@pytest.mark.parametrize("who", WHO)
def test_deleting_a_form_needs_an_admin(shared, who):
    crew, form, _ = shared
    response = crew.api(who).delete(f"/api/v1/forms/{form.pk}")
    assert response.status_code == expected(who, "admin", 204)
    assert Form.objects.filter(pk=form.pk).exists() == (response.status_code != 204)


@pytest.mark.parametrize("who", WHO)
def test_creating_a_form_in_a_team_needs_an_admin(team_crew, who):
    response = team_crew.api(who).post("/api/v1/forms", {"name": "New",
                                                          "teamId": str(team_crew.team.pk)},
                                       format="json")
    status = expected(who, "admin", 201)
    assert response.status_code == status
    if status == 201:
        assert (response.json()["teamId"], response.json()["role"]) == (str(team_crew.team.pk),
                                                                          who)


@pytest.mark.parametrize("who", WHO)
def test_the_form_list_shows_team_forms_with_the_callers_role(shared, who):
    crew, form, _ = shared
    listed = crew.api(who).get("/api/v1/forms").json()
    if who == "outsider":
        assert listed == []
    else:
        assert [(f["_id"], f["teamId"], f["role"]) for f in listed] == [
            (str(form.pk), str(crew.team.pk), who)]


@pytest.mark.parametrize("who", WHO)
def test_integrations_are_read_by_viewers_and_managed_by_editors(shared, who):
    crew, form, _ = shared
    integration = integration_create(owner=crew.users["admin"], type="WEBHOOK",
                                     config={"url": "https://hooks.example.com/in"},
                                     form_id=str(form.pk))
    client = crew.api(who)
    listed = client.get("/api/v1/integrations").json()
    assert [row["_id"] for row in listed] == ([] if who == "outsider" else [str(integration.pk)])
    if listed:
        assert "signingSecret" not in str(listed)
    path = f"/api/v1/integrations/{integration.pk}"
    status = client.get(f"{path}/status").status_code
    assert status == (404 if who == "outsider" else 200)
    changed = client.patch(path, {"enabled": False}, format="json")
    assert changed.status_code == expected(who, "editor", 200)
    added = client.post("/api/v1/integrations", {
        "type": "WEBHOOK", "config": {"url": "https://hooks.example.com/b"},
        "formId": str(form.pk)}, format="json")
    assert added.status_code == (400 if who == "outsider" else expected(who, "editor", 201))
    deleted = client.delete(path)
    assert deleted.status_code == expected(who, "editor", 204)


@pytest.mark.parametrize("who", WHO)
def test_retrying_a_delivery_needs_an_editor(shared, who):
    crew, form, submission = shared
    integration = integration_create(owner=crew.users["admin"], type="WEBHOOK",
                                     config={"url": "https://hooks.example.com/in"},
                                     form_id=str(form.pk))
    delivery = Delivery.objects.create(integration=integration, submission=submission,
                                       event_type="submission.created", state="failed",
                                       next_attempt_at=timezone.now())
    response = crew.api(who).post(f"/api/v1/deliveries/{delivery.pk}/retry")
    assert response.status_code == expected(who, "editor", 202)


@pytest.mark.parametrize("who", WHO)
def test_erasure_covers_team_forms_for_editors(shared, who):
    crew, _, _ = shared
    response = crew.api(who).get("/api/v1/erasures/preview", {"email": "ada@example.com"})
    assert response.status_code == 200
    can = who != "outsider" and ROLES.index(who) >= NEEDS["editor"]
    assert response.json()["submissions"] == (1 if can else 0)


@pytest.mark.parametrize("who", WHO)
def test_api_keys_are_made_on_team_forms_by_admins(shared, who):
    crew, form, _ = shared
    response = crew.api(who).post("/api/v1/api-keys", {"name": "sync", "forms": [str(form.pk)]},
                                  format="json")
    status = 400 if who == "outsider" else expected(who, "admin", 201)
    assert response.status_code == status
