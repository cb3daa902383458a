"""A form's field rules through the forms API: kept, shown, and every malformed list a 400
keyed by the name the client sent (contract, "Field rules")."""

import json

import pytest

from forms_app.models import Form

FORMS = "/api/v1/forms"

RULES = [
    {"name": "email", "type": "email", "required": True, "maxLength": 200},
    {"name": "age", "type": "number", "min": 18, "max": 120.5},
    {"name": "size", "type": "select", "required": True, "options": ["S", "M", "L"]},
    {"name": "day", "type": "date", "min": "2026-01-01", "max": "2026-12-31"},
    {"name": "cv", "type": "file"},
]
SHOWN = [
    {"name": "email", "type": "email", "required": True, "maxLength": 200},
    {"name": "age", "type": "number", "required": False, "min": 18, "max": 120.5},
    {"name": "size", "type": "select", "required": True, "options": ["S", "M", "L"]},
    {"name": "day", "type": "date", "required": False, "min": "2026-01-01", "max": "2026-12-31"},
    {"name": "cv", "type": "file", "required": False},
]


def test_a_new_form_takes_any_fields(owner_api):
    body = owner_api.post(FORMS, {"name": "Contact"}, format="json").json()

    assert body["fields"] is None
    assert body["allowExtraFields"] is True


def test_rules_are_kept_and_shown_in_every_shape(owner_api):
    created = owner_api.post(FORMS, {"name": "Contact", "fields": RULES,
                                     "allowExtraFields": False}, format="json")

    assert created.status_code == 201
    assert created.json()["fields"] == SHOWN
    assert created.json()["allowExtraFields"] is False
    form_id = created.json()["_id"]
    assert owner_api.get(f"{FORMS}/{form_id}").json()["fields"] == SHOWN
    assert owner_api.get(FORMS).json()[0]["fields"] == SHOWN
    assert Form.objects.get().field_rules == SHOWN


def test_patch_replaces_the_rules_and_null_takes_them_away(owner_api):
    form_id = owner_api.post(FORMS, {"name": "C", "fields": RULES}, format="json").json()["_id"]

    changed = owner_api.patch(f"{FORMS}/{form_id}", {"fields": RULES[:1]}, format="json")
    assert changed.status_code == 200
    assert changed.json()["fields"] == SHOWN[:1]

    cleared = owner_api.patch(f"{FORMS}/{form_id}", {"fields": None}, format="json")
    assert cleared.json()["fields"] is None
    assert Form.objects.get().field_rules is None


def test_a_patch_of_other_settings_keeps_the_rules(owner_api):
    form_id = owner_api.post(FORMS, {"name": "C", "fields": RULES}, format="json").json()["_id"]

    owner_api.patch(f"{FORMS}/{form_id}", {"name": "Renamed"}, format="json")

    assert Form.objects.get().field_rules == SHOWN


def rule(**changes):
    return {"name": "f", "type": "text"} | changes


BAD_RULES = [
    ("not a list", "fields", {"name": "x", "type": "text"}),
    ("a string", "fields", "email"),
    ("over 100 rules", "fields", [rule(name=f"f{i}") for i in range(101)]),
    ("not an object", "fields.0", ["email"]),
    ("null rule", "fields.0", [None]),
    ("unknown type", "fields.0.type", [rule(type="color")]),
    ("type missing", "fields.0.type", [{"name": "x"}]),
    ("type not a string", "fields.0.type", [rule(type=["text"])]),
    ("duplicate names", "fields.1.name", [rule(name="a"), rule(name="a")]),
    ("options on a text", "fields.0.options", [rule(options=["a"])]),
    ("select without options", "fields.0.options", [rule(type="select")]),
    ("empty options", "fields.0.options", [rule(type="select", options=[])]),
    ("option not a string", "fields.0.options", [rule(type="select", options=[1])]),
    ("blank option", "fields.0.options", [rule(type="select", options=[" "])]),
    ("repeated option", "fields.0.options", [rule(type="select", options=["a", "a"])]),
    ("options not a list", "fields.0.options", [rule(type="select", options="a,b")]),
    ("too many options", "fields.0.options",
     [rule(type="select", options=[str(i) for i in range(201)])]),
    ("min > max", "fields.0.min", [rule(type="number", min=5, max=1)]),
    ("date min > max", "fields.0.min", [rule(type="date", min="2026-02-01", max="2026-01-01")]),
    ("min not a number", "fields.0.min", [rule(type="number", min="5")]),
    ("max a boolean", "fields.0.max", [rule(type="number", max=True)]),
    ("min on a text", "fields.0.min", [rule(min=1)]),
    ("date max not a date", "fields.0.max", [rule(type="date", max="31/12/2026")]),
    ("date max impossible", "fields.0.max", [rule(type="date", max="2026-02-30")]),
    ("negative maxLength", "fields.0.maxLength", [rule(maxLength=-1)]),
    ("zero maxLength", "fields.0.maxLength", [rule(maxLength=0)]),
    ("maxLength a float", "fields.0.maxLength", [rule(maxLength=2.5)]),
    ("maxLength a string", "fields.0.maxLength", [rule(maxLength="10")]),
    ("maxLength on a number", "fields.0.maxLength", [rule(type="number", maxLength=3)]),
    ("empty name", "fields.0.name", [rule(name="")]),
    ("blank name", "fields.0.name", [rule(name="   ")]),
    ("name too long", "fields.0.name", [rule(name="n" * 257)]),
    ("name not a string", "fields.0.name", [rule(name=7)]),
    ("name missing", "fields.0.name", [{"type": "text"}]),
    ("NUL in name", "fields.0.name", [rule(name="a\x00b")]),
    ("lone surrogate in name", "fields.0.name", [rule(name="a\ud800")]),
    ("required not a boolean", "fields.0.required", [rule(required="yes")]),
    ("unknown key", "fields.0.pattern", [rule(pattern=".*")]),
    ("third rule bad", "fields.2.type", [rule(name="a"), rule(name="b"), rule(name="c", type="x")]),
]


@pytest.mark.parametrize(("case", "key", "fields"), BAD_RULES, ids=[c[0] for c in BAD_RULES])
def test_malformed_rules_are_400_keyed_by_the_name_sent(owner_api, case, key, fields):
    # As text: a lone surrogate survives only as a JSON escape.
    body_sent = json.dumps({"name": "C", "fields": fields})
    response = owner_api.post(FORMS, body_sent, content_type="application/json")

    assert response.status_code == 400, case
    body = response.json()
    assert body["error"] == "validation_error"
    assert key in body["details"], body["details"]
    assert isinstance(body["details"][key], str) and body["details"][key]
    assert not Form.objects.exists()


def test_a_bad_patch_changes_nothing(owner_api):
    form_id = owner_api.post(FORMS, {"name": "C", "fields": RULES}, format="json").json()["_id"]

    response = owner_api.patch(f"{FORMS}/{form_id}",
                               {"name": "New", "fields": [rule(type="select")]}, format="json")

    assert response.status_code == 400
    assert response.json()["details"] == {
        "fields.0.options": "A select field needs its list of options."}
    form = Form.objects.get()
    assert (form.name, form.field_rules) == ("C", SHOWN)


def test_every_problem_of_a_list_is_named(owner_api):
    response = owner_api.post(FORMS, {"name": "C", "fields": [
        rule(type="colour"), rule(name="", type="number", min=3, max=1)]}, format="json")

    assert response.json()["details"] == {
        "fields.0.type": "Must be one of: text, email, number, url, tel, date, checkbox, "
                         "select, file.",
        "fields.1.name": "A field name cannot be blank.",
        "fields.1.min": "min must not be greater than max.",
    }


def test_exactly_100_rules_are_taken(owner_api):
    rules = [rule(name=f"f{i}") for i in range(100)]

    response = owner_api.post(FORMS, {"name": "C", "fields": rules}, format="json")

    assert response.status_code == 201
    assert len(response.json()["fields"]) == 100


@pytest.mark.parametrize("value", ["false", 0, None])
def test_allow_extra_fields_takes_only_a_boolean(owner_api, value):
    response = owner_api.post(FORMS, {"name": "C", "allowExtraFields": value}, format="json")

    assert response.status_code == 400
    assert "allowExtraFields" in response.json()["details"]


def test_another_users_form_rules_cannot_be_changed(owner_api, other_api):
    form_id = owner_api.post(FORMS, {"name": "C"}, format="json").json()["_id"]

    response = other_api.patch(f"{FORMS}/{form_id}", {"fields": RULES}, format="json")

    assert response.status_code == 404
    assert Form.objects.get().field_rules is None


def test_the_service_keeps_only_whole_rules_whoever_calls_it(user):
    from core.errors import ServiceError
    from forms_app.services import form_create

    form = form_create(owner=user, name="C", field_rules=[{"name": "a", "type": "text"}])
    assert form.field_rules == [{"name": "a", "type": "text", "required": False}]

    with pytest.raises(ServiceError) as refused:
        form_create(owner=user, name="D", field_rules=[{"name": "a", "type": "colour"}])
    assert refused.value.details == {
        "fields.0.type": "Must be one of: text, email, number, url, tel, date, checkbox, "
                         "select, file."}
    assert Form.objects.count() == 1


# A rule on a field intake never keeps (a control field, the form's honeypot) could never see
# it: required, it would refuse every submission. Refused whichever side changes: a control
# field as a bad rule (400), the honeypot as a conflict with that setting (409).
@pytest.mark.parametrize("name", ["_gotcha", "_next", "_subject", "g-recaptcha-response",
                                  "access_key"])
def test_a_rule_on_a_control_field_is_refused(owner_api, name):
    response = owner_api.post(FORMS, {"name": "C", "fields": [
        {"name": "email", "type": "email"}, {"name": name, "type": "text", "required": True}]},
        format="json")

    assert response.status_code == 400
    assert set(response.json()["details"]) == {"fields.1.name"}
    assert "control field" in response.json()["details"]["fields.1.name"]
    assert not Form.objects.exists()


def test_a_rule_on_the_honeypot_is_refused_with_the_honeypot_in_the_same_request(owner_api):
    response = owner_api.post(FORMS, {"name": "C", "honeypotField": "website",
                                      "fields": [{"name": "website", "type": "url"}]},
                              format="json")

    assert response.status_code == 409
    assert response.json()["error"] == "honeypot_conflict"
    assert "honeypot" in response.json()["details"]["fields.0.name"]


def test_a_rule_on_the_stored_honeypot_is_refused_and_nothing_changes(owner_api):
    form_id = owner_api.post(FORMS, {"name": "C", "honeypotField": "website"},
                             format="json").json()["_id"]

    response = owner_api.patch(f"{FORMS}/{form_id}", {
        "name": "New", "fields": [{"name": "website", "type": "text", "required": True}]},
        format="json")

    assert response.status_code == 409
    assert list(response.json()["details"]) == ["fields.0.name"]
    form = Form.objects.get()
    assert (form.name, form.field_rules) == ("C", None)


def test_a_honeypot_on_a_field_a_rule_checks_is_refused(owner_api):
    form_id = owner_api.post(FORMS, {"name": "C", "fields": RULES}, format="json").json()["_id"]

    response = owner_api.patch(f"{FORMS}/{form_id}", {"honeypotField": "email"}, format="json")

    assert response.status_code == 409
    assert "email" in response.json()["details"]["honeypotField"]
    assert Form.objects.get().honeypot_field is None


def test_a_form_saved_with_such_a_rule_before_keeps_taking_other_changes(owner_api):
    """Checked only when the rules or the honeypot change: an older form is not stuck."""
    form_id = owner_api.post(FORMS, {"name": "C"}, format="json").json()["_id"]
    Form.objects.filter(pk=form_id).update(
        honeypot_field="website", field_rules=[{"name": "website", "type": "text",
                                                "required": False}])

    response = owner_api.patch(f"{FORMS}/{form_id}", {"name": "Renamed"}, format="json")

    assert response.status_code == 200
    assert Form.objects.get().name == "Renamed"


def test_the_honeypot_and_rules_on_other_fields_go_together(owner_api, client):
    """The check names only what collides: a honeypot beside rules on other fields works,
    and a real post with the honeypot empty passes the rules."""
    created = owner_api.post(FORMS, {"name": "C", "honeypotField": "website", "fields": [
        {"name": "email", "type": "email", "required": True}], "allowExtraFields": False},
        format="json")
    assert created.status_code == 201

    posted = client.post(f"/api/v1/f/{created.json()['slug']}",
                         {"email": "ada@example.com", "website": ""},
                         HTTP_ACCEPT="application/json")

    assert posted.status_code == 200, posted.content
