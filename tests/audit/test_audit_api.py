"""GET /api/v1/audit: the caller's own log, newest first, cursor-paged, filtered; read-only."""

from datetime import timedelta

import pytest
from django.db import transaction

from audit.models import Entry
from audit.services import Target, record
from core import clock
from tests.audit.conftest import AUDIT


def write(owner, action="form.changed", at=None, actor=None, name="Contact"):
    with transaction.atomic():
        entry = record(owner_id=owner.pk, actor=actor or owner, action=action,
                       target=Target("form", "f1", name), details={"changed": ["name"]})
    if at is not None:
        Entry.objects.filter(pk=entry.pk).update(at=at)
        entry.refresh_from_db()
    return entry


def ids(body) -> list[str]:
    return [item["_id"] for item in body["data"]]


def test_newest_first_and_paged_without_skipping_or_repeating(owner_api, user):
    now = clock.now()
    made = [write(user, at=now - timedelta(minutes=n % 3)) for n in range(7)]  # ties in `at`
    expected = [str(entry.pk) for entry in
                sorted(Entry.objects.filter(pk__in=[e.pk for e in made]),
                       key=lambda e: (e.at, e.pk), reverse=True)]

    seen, cursor = [], None
    while True:
        query = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        body = owner_api.get(AUDIT, query).json()
        seen += ids(body)
        assert body["hasMore"] is (body["nextCursor"] is not None)
        if not body["hasMore"]:
            break
        write(user)  # a new entry meanwhile lands on top, not in the pages still to read
        cursor = body["nextCursor"]

    assert seen == expected


def test_the_default_page_is_25(owner_api, user):
    for _ in range(26):
        write(user)

    body = owner_api.get(AUDIT).json()

    assert len(body["data"]) == 25 and body["hasMore"] is True


def test_action_filters_by_code_or_by_family(owner_api, user):
    write(user, "form.changed")
    write(user, "form.deleted")
    write(user, "formation.changed")
    write(user, "api_key.created")

    def actions(action):
        return sorted(item["action"] for item in owner_api.get(AUDIT, {"action": action}).json()[
            "data"])

    assert actions("form.deleted") == ["form.deleted"]
    assert actions("form") == ["form.changed", "form.deleted"]
    assert actions("api_key") == ["api_key.created"]


def test_since_is_inclusive(owner_api, user):
    old = write(user, at=clock.now() - timedelta(days=3))
    new = write(user, at=clock.now() - timedelta(days=1))

    body = owner_api.get(AUDIT, {"since": new.at.isoformat()}).json()

    assert [str(new.pk)] == ids(body) and str(old.pk) not in ids(body)


def test_a_filter_holds_across_pages(owner_api, user):
    for n in range(4):
        write(user, "form.changed" if n % 2 else "form.deleted")
    first = owner_api.get(AUDIT, {"action": "form.changed", "limit": 1}).json()
    rest = owner_api.get(AUDIT, {"action": "form.changed", "limit": 1,
                                 "cursor": first["nextCursor"]}).json()

    assert [item["action"] for item in first["data"] + rest["data"]] == ["form.changed"] * 2
    assert rest["hasMore"] is False and rest["nextCursor"] is None


@pytest.mark.parametrize(("query", "name"), [
    ({"limit": 0}, "limit"), ({"limit": 101}, "limit"), ({"limit": "x"}, "limit"),
    ({"since": "yesterday"}, "since"), ({"cursor": "forged"}, "cursor"),
    ({"action": "Form Changed"}, "action"), ({"action": "x" * 65}, "action"),
])
def test_bad_parameters_are_400_invalid_parameter(owner_api, query, name):
    response = owner_api.get(AUDIT, query)

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_parameter"
    assert set(body["details"]) == {name}


def test_another_accounts_cursor_is_refused(owner_api, other_api, user, other_user):
    for _ in range(2):
        write(other_user)
    theirs = other_api.get(AUDIT, {"limit": 1}).json()["nextCursor"]

    response = owner_api.get(AUDIT, {"cursor": theirs})

    assert response.status_code == 400
    assert response.json()["details"] == {"cursor": "The cursor belongs to another log."}


def test_another_accounts_entries_are_never_shown(owner_api, user, other_user):
    write(other_user, name="Theirs")
    mine = write(user)

    assert ids(owner_api.get(AUDIT).json()) == [str(mine.pk)]


def test_a_team_entry_is_not_in_the_personal_log(owner_api, user):
    with transaction.atomic():
        record(owner_id=user.pk, actor=user, action="form.changed", target=Target("form", "f"),
               team_id="6f1c1c2e-7c51-4a8e-9a43-0e3f3f7f0c01")

    assert owner_api.get(AUDIT).json()["data"] == []


def test_a_deleted_actor_still_reads_by_address(owner_api, user, other_user):
    write(user, actor=other_user)
    other_user.delete()

    actor = owner_api.get(AUDIT).json()["data"][0]["actor"]

    assert actor == {"_id": None, "email": "other@example.com"}


def test_signed_out_is_401(api):
    response = api.get(AUDIT)

    assert response.status_code == 401
    assert set(response.json()) >= {"error", "message"}


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_no_method_changes_or_deletes_entries(owner_api, user, method):
    entry = write(user)

    for path in (AUDIT, f"{AUDIT}/{entry.pk}"):
        response = getattr(owner_api, method)(path, {}, format="json")
        assert response.status_code in (404, 405), (path, response.status_code)
        assert response.json()["error"] in ("method_not_allowed", "not_found")
    assert getattr(owner_api, method)(AUDIT, {}, format="json").status_code == 405
    assert Entry.objects.get(pk=entry.pk).details == {"changed": ["name"]}


def test_the_schema_documents_the_log(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()

    assert set(schema["paths"]["/api/v1/audit"]) == {"get"}
    operation = schema["paths"]["/api/v1/audit"]["get"]
    assert {parameter["name"] for parameter in operation["parameters"]} == {
        "limit", "cursor", "since", "action"}
    assert {"200", "400", "401"} <= set(operation["responses"])
