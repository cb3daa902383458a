"""A REST hook subscription that ends is in the log whichever way it ends: deleted in the
admin, or ended because its key lost the form (revoked, deleted or narrowed by an operator,
its maker removed from or demoted in the team), the person who made that change as the actor,
in that change's transaction."""

from __future__ import annotations

import pytest

from audit.models import Entry
from forms_app.services import form_create
from integrations.models import Integration
from pullapi.models import ApiKey
from tests.audit.conftest import entries, only
from tests.conftest import CommitClient
from tests.teams.helpers import crew

HOOKS = "/api/v1/hooks"
URL = "https://hooks.zapier.example/catch/1"


def hooks_key(api: CommitClient, form_id: str) -> CommitClient:
    """A client holding a hooks-scoped key for the form, made over the API."""
    made = api.post("/api/v1/api-keys", {"name": "zapier", "forms": [form_id],
                                         "scopes": ["read", "hooks"]}, format="json")
    assert made.status_code == 201, made.content
    client = CommitClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {made.json()['key']}")
    return client


def subscribe(client: CommitClient, form_id: str) -> str:
    made = client.post(HOOKS, {"url": URL, "formId": form_id}, format="json")
    assert made.status_code == 201, made.content
    return made.json()["_id"]


@pytest.fixture
def team(db):
    """A team whose admin subscribed to a team form with their own hooks key."""
    team = crew()
    created = team.api("admin").post("/api/v1/forms", {"name": "Leads",
                                                       "teamId": str(team.team.pk)},
                                      format="json")
    assert created.status_code == 201
    team.form_id = created.json()["_id"]
    team.hook_id = subscribe(hooks_key(team.api("admin"), team.form_id), team.form_id)
    Entry.objects.all().delete()
    return team


@pytest.fixture
def keyed_hook(owner_api, form):
    """A subscription the owner made with a hooks key, the log then emptied."""
    hook_id = subscribe(hooks_key(owner_api, str(form.pk)), str(form.pk))
    Entry.objects.all().delete()
    return Integration.objects.get(pk=hook_id)


def test_a_subscription_deleted_in_the_admin_is_recorded(admin_client, operator, keyed_hook):
    response = admin_client.post(f"/admin/integrations/integration/{keyed_hook.pk}/delete/",
                                 {"post": "yes"})

    assert response.status_code == 302
    entry = only("subscription.deleted")
    assert (entry.owner_id, entry.actor_id, entry.target_id, entry.team_id) == (
        keyed_hook.owner_id, operator.pk, str(keyed_hook.pk), None)
    assert entry.details == {"via": "admin"}


def test_a_team_forms_subscription_deleted_in_the_admin_is_in_the_teams_log(
        admin_client, operator, team):
    admin_client.post(f"/admin/integrations/integration/{team.hook_id}/delete/",
                      {"post": "yes"})

    log = team.api("owner").get(f"/api/v1/teams/{team.team.pk}/audit").json()["data"]
    assert [(e["action"], e["actor"]["email"], e["target"]["_id"]) for e in log] == [
        ("subscription.deleted", "admin@example.com", team.hook_id)]
    assert not Integration.objects.filter(pk=team.hook_id).exists()


def test_selected_subscriptions_deleted_in_the_admin_are_recorded(admin_client, team):
    admin_client.post("/admin/integrations/integration/", {
        "action": "delete_selected", "_selected_action": [team.hook_id], "post": "yes"})

    assert only("subscription.deleted").team_id == team.team.pk


@pytest.mark.parametrize("change", ["remove", "demote"])
def test_a_subscription_its_maker_lost_is_ended_by_who_removed_or_demoted_them(team, change):
    member = f"/api/v1/teams/{team.team.pk}/members/{team.users['admin'].pk}"
    owner = team.api("owner")
    response = (owner.delete(member) if change == "remove"
                else owner.patch(member, {"role": "editor"}, format="json"))

    assert response.status_code in (200, 204)
    assert not Integration.objects.filter(pk=team.hook_id).exists()
    log = owner.get(f"/api/v1/teams/{team.team.pk}/audit", {"action": "subscription"})
    [ended] = log.json()["data"]
    assert (ended["action"], ended["actor"]["email"], ended["target"]["_id"]) == (
        "subscription.deleted", "owner@team.example", team.hook_id)
    assert ended["details"] == {"type": "WEBHOOK", "reason": "team_role",
                                "formId": team.form_id}


def test_a_removal_that_fails_leaves_the_subscription_and_no_entry(team, monkeypatch):
    def fails(*args, **kwargs):
        raise RuntimeError("the database went away")

    # The removal's own entry is its last write: the subscription has ended by then.
    monkeypatch.setattr("teams.services._audit", fails)
    owner = team.api("owner")
    owner.raise_request_exception = False

    response = owner.delete(f"/api/v1/teams/{team.team.pk}/members/{team.users['admin'].pk}")

    assert response.status_code == 500
    assert Integration.objects.filter(pk=team.hook_id).exists()
    assert entries() == []


def test_a_key_revoked_ends_each_subscription_in_the_log(owner_api, user, keyed_hook):
    key = ApiKey.objects.get()

    assert owner_api.delete(f"/api/v1/api-keys/{key.pk}").status_code == 204

    ended = only("subscription.deleted")
    assert (ended.actor_id, ended.target_id, ended.details["reason"]) == (
        user.pk, str(keyed_hook.pk), "api_key_revoked")
    assert only("api_key.revoked").details == {"subscriptionsEnded": 1}


def test_a_keys_forms_taken_in_the_admin_end_its_subscriptions_there(
        admin_client, operator, user, keyed_hook):
    other = form_create(owner=user, name="Other", notify_owner=False)
    key = ApiKey.objects.get()

    response = admin_client.post(f"/admin/pullapi/apikey/{key.pk}/change/",
                                 {"name": "zapier", "forms": [str(other.pk)]})

    assert response.status_code == 302, response.content.decode()[:2000]
    assert not Integration.objects.filter(pk=keyed_hook.pk).exists()
    ended = only("subscription.deleted")
    assert (ended.actor_id, ended.target_id, ended.details["reason"]) == (
        operator.pk, str(keyed_hook.pk), "api_key_forms_changed")


def test_an_admin_change_that_fails_ends_no_subscription_and_records_nothing(
        admin_client, user, keyed_hook, monkeypatch):
    def fails(*args, **kwargs):
        raise RuntimeError("the database went away")

    # Its last step, after the subscriptions ended, inside the admin's transaction.
    monkeypatch.setattr("pullapi.admin.ApiKeyAdmin.message_user", fails)
    admin_client.raise_request_exception = False
    other = form_create(owner=user, name="Other", notify_owner=False)
    Entry.objects.all().delete()

    response = admin_client.post(f"/admin/pullapi/apikey/{ApiKey.objects.get().pk}/change/",
                                 {"name": "zapier", "forms": [str(other.pk)]})

    assert response.status_code == 500
    assert Integration.objects.filter(pk=keyed_hook.pk).exists()
    assert entries() == []


def test_a_key_deleted_in_the_admin_ends_its_subscriptions_in_the_log(
        admin_client, operator, keyed_hook):
    key = ApiKey.objects.get()

    response = admin_client.post(f"/admin/pullapi/apikey/{key.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    ended = only("subscription.deleted")
    assert (ended.actor_id, ended.target_id, ended.details["reason"]) == (
        operator.pk, str(keyed_hook.pk), "api_key_deleted")
    assert only("api_key.deleted").actor_id == operator.pk
