"""A change to the account itself, made by its holder through the API or the dashboard, is in
the account's own log, by the names of what changed, in the change's transaction."""

from __future__ import annotations

import pytest

from accounts.models import User
from tests.audit.conftest import entries, only
from tests.conftest import PASSWORD

ME = "/api/auth/me"


def test_a_new_name_is_in_the_accounts_log(owner_api, user, logged):
    response = owner_api.patch(ME, {"name": "Ada Lovelace"}, format="json")

    assert response.status_code == 200
    [entry] = logged()
    assert (entry["action"], entry["actor"]["_id"], entry["target"]) == (
        "account.changed", str(user.pk),
        {"type": "account", "_id": str(user.pk), "name": "owner@example.com"})
    assert entry["details"] == {"changed": ["name"]}


def test_the_same_name_or_the_onboarding_mark_records_nothing(owner_api, user):
    User.objects.filter(pk=user.pk).update(name="Ada")

    assert owner_api.patch(ME, {"name": "Ada"}, format="json").status_code == 200
    assert owner_api.patch(ME, {"onboardingComplete": True}, format="json").status_code == 200

    assert entries() == []


def test_a_name_whose_entry_cannot_be_written_is_not_changed(owner_api, user, monkeypatch):
    def fails(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr("audit.services.Entry.objects.create", fails)
    owner_api.raise_request_exception = False

    assert owner_api.patch(ME, {"name": "Ada Lovelace"}, format="json").status_code == 500
    assert User.objects.get(pk=user.pk).name == ""


@pytest.fixture
def browser(client, user):
    response = client.post("/dashboard/login", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 302
    return client


def test_a_time_zone_chosen_in_the_dashboard_is_in_the_accounts_log(browser, user):
    response = browser.post("/dashboard/account/time-zone", {"timeZone": "Europe/Paris"})

    assert response.status_code == 302
    entry = only("account.changed")
    assert (entry.owner_id, entry.actor_id, entry.details) == (
        user.pk, user.pk, {"changed": ["timeZone"]})


def test_the_browsers_guess_of_a_time_zone_records_nothing(browser):
    browser.post("/dashboard/account/time-zone", {"timeZone": "Asia/Tokyo", "auto": "on"})

    assert entries() == []


def test_a_time_zone_whose_entry_cannot_be_written_is_not_changed(browser, user,
                                                                   monkeypatch):
    def fails(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr("audit.services.Entry.objects.create", fails)
    browser.raise_request_exception = False

    assert browser.post("/dashboard/account/time-zone",
                        {"timeZone": "Europe/Paris"}).status_code == 500
    assert User.objects.get(pk=user.pk).time_zone == ""
