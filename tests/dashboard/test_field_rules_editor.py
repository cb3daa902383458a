"""The Setup page's field rules: the editor saves them through the API's checks and shows
its problems in words on the row they belong to; the HTML snippet is built from them."""

import html
import re

import pytest

from forms_app.models import Form
from forms_app.services import form_update
from tests.dashboard.test_form_sections import text


def setup_url(form) -> str:
    return f"/dashboard/forms/{form.pk}/setup"


def rows(*rules, extras=True, initial=0) -> dict:
    """The editor's POST: a row per rule (missing inputs left empty), as the browser sends."""
    data = {"rules-TOTAL_FORMS": str(len(rules)), "rules-INITIAL_FORMS": str(initial),
            "rules-MIN_NUM_FORMS": "0", "rules-MAX_NUM_FORMS": "100"}
    for index, rule in enumerate(rules):
        for key in ("name", "maxLength", "min", "max", "options"):
            data[f"rules-{index}-{key}"] = rule.get(key, "")
        data[f"rules-{index}-type"] = rule.get("type", "text")
        for key in ("required", "DELETE"):
            if rule.get(key):
                data[f"rules-{index}-{key}"] = "on"
    if extras:
        data["allowExtraFields"] = "on"
    return data


def snippet(response) -> str:
    page = response.content.decode()
    found = re.search(r'<pre id="snippet-html">(.*?)</pre>', page, re.S)
    assert found, "no HTML snippet on the page"
    return html.unescape(found.group(1))


def test_the_editor_saves_rules_and_redirects(owner, form):
    response = owner.post(setup_url(form), rows(
        {"name": "email", "type": "email", "required": True, "maxLength": "200"},
        {"name": "age", "type": "number", "min": "18", "max": "99.5"},
        {"name": "day", "type": "date", "min": "2026-01-01"},
        {"name": "size", "type": "select", "options": "S\nM\n\nL\n"},
        {},  # a blank row: no rule
        extras=False,
    ))

    assert response.status_code == 302
    assert response["Location"] == setup_url(form)
    form.refresh_from_db()
    assert form.field_rules == [
        {"name": "email", "type": "email", "required": True, "maxLength": 200},
        {"name": "age", "type": "number", "required": False, "min": 18, "max": 99.5},
        {"name": "day", "type": "date", "required": False, "min": "2026-01-01"},
        {"name": "size", "type": "select", "required": False, "options": ["S", "M", "L"]},
    ]
    assert form.allow_extra_fields is False
    assert "Fields saved." in text(owner.get(response["Location"]))


def test_the_editor_shows_the_rules_with_room_for_three_more(owner, form):
    form_update(form=form, field_rules=[
        {"name": "size", "type": "select", "required": True, "options": ["S", "M"]}])

    page = text(owner.get(setup_url(form)))

    assert '<legend>Field 1: size</legend>' in page
    assert page.count("<legend>New field</legend>") == 3
    assert re.search(r'<textarea name="rules-0-options"[^>]*>\nS\nM</textarea>', page)
    assert re.search(r'<input type="checkbox" name="rules-0-required"[^>]*checked', page)


def test_a_bad_rule_is_400_named_in_words_on_its_row_and_changes_nothing(owner, form):
    form_update(form=form, field_rules=[{"name": "email", "type": "email", "required": True}])

    response = owner.post(setup_url(form), rows(
        {"name": "email", "type": "email"},
        {"name": "size", "type": "select"},
        {"name": "age", "type": "number", "min": "ten"},
        {"name": "email", "type": "text"},
    ))

    assert response.status_code == 400
    page = text(response)
    message = re.search(r'<li class="error">(Fields not saved\.[^<]*)</li>', page)
    assert message, page
    assert html.unescape(message.group(1)).strip() == (
        "Fields not saved. Field 2, Choices: A select field needs its list of options.; "
        "Field 3, Lowest: Must be a number.; Field 4, Field name: Another rule already has "
        "this name.")
    assert re.search(r'id="rules-1-options_error"><p class="field-error" role="alert">A select '
                     r'field needs its list of options\.', page)
    assert 'value="ten"' in page  # what was typed is kept
    form.refresh_from_db()
    assert form.field_rules == [{"name": "email", "type": "email", "required": True}]


def test_a_row_without_a_name_but_with_settings_is_refused(owner, form):
    response = owner.post(setup_url(form), rows({"name": "", "type": "text", "maxLength": "5"}))

    assert response.status_code == 400
    assert "Field 1, Field name: A field name cannot be blank." in html.unescape(text(response))
    assert Form.objects.get().field_rules is None


def test_removing_every_rule_takes_any_fields_again(owner, form):
    form_update(form=form, field_rules=[{"name": "a", "type": "text", "required": False},
                                        {"name": "b", "type": "text", "required": False}])

    owner.post(setup_url(form), rows({"name": "a", "DELETE": True}, {"name": "b"}, initial=2))
    assert Form.objects.get().field_rules == [{"name": "b", "type": "text", "required": False}]

    owner.post(setup_url(form), rows({"name": "b", "DELETE": True}, initial=1))
    assert Form.objects.get().field_rules is None


def test_another_owners_setup_cannot_be_saved(owner, other_user):
    from forms_app.services import form_create

    theirs = form_create(owner=other_user, name="Theirs")

    response = owner.post(setup_url(theirs), rows({"name": "x"}))

    assert response.status_code == 404
    assert Form.objects.get(pk=theirs.pk).field_rules is None


# --- The snippet -------------------------------------------------------------------------

def test_without_rules_the_snippet_is_the_example(owner, form):
    shown = snippet(owner.get(setup_url(form)))

    assert shown == (
        f'<form action="{form.endpoint}" method="post" enctype="multipart/form-data">\n'
        '  <label>Email <input name="email" type="email" required></label>\n'
        '  <label>Message <textarea name="message"></textarea></label>\n'
        "  <button>Send</button>\n"
        "</form>")


def test_the_snippet_is_built_from_the_rules(owner, form):
    form_update(form=form, honeypot_field="website", field_rules=[
        {"name": "name", "type": "text", "required": True, "maxLength": 100},
        {"name": "email", "type": "email", "required": True, "maxLength": 320},
        {"name": "message", "type": "text", "required": False},
        {"name": "age", "type": "number", "required": False, "min": 18, "max": 120},
        {"name": "site", "type": "url", "required": False},
        {"name": "phone", "type": "tel", "required": False, "maxLength": 20},
        {"name": "day", "type": "date", "required": False, "min": "2026-01-01"},
        {"name": "agree", "type": "checkbox", "required": True},
        {"name": "size", "type": "select", "required": True, "options": ["S", "M"]},
        {"name": "cv", "type": "file", "required": False},
    ])

    shown = snippet(owner.get(setup_url(form)))

    assert shown == "\n".join([
        f'<form action="{form.endpoint}" method="post" enctype="multipart/form-data">',
        '  <label>name <input name="name" type="text" maxlength="100" required></label>',
        '  <label>email <input name="email" type="email" maxlength="320" required></label>',
        '  <label>message <textarea name="message"></textarea></label>',
        '  <label>age <input name="age" type="number" step="any" min="18" max="120"></label>',
        '  <label>site <input name="site" type="url"></label>',
        '  <label>phone <input name="phone" type="tel" maxlength="20"></label>',
        '  <label>day <input name="day" type="date" min="2026-01-01"></label>',
        '  <label><input name="agree" type="checkbox" value="yes" required> agree</label>',
        '  <label>size <select name="size" required><option value="">Choose…</option>'
        '<option value="S">S</option><option value="M">M</option></select></label>',
        '  <label>cv <input name="cv" type="file"></label>',
        '  <input name="website" style="display:none" tabindex="-1" autocomplete="off">',
        "  <button>Send</button>",
        "</form>"])


def test_a_file_input_accepts_the_types_uploads_keep(owner, form):
    form_update(form=form, field_rules=[{"name": "cv", "type": "file", "required": True}],
                file_uploads={"maxBytes": 1000, "maxFiles": 1,
                              "types": ["application/pdf", "image/*"]})

    shown = snippet(owner.get(setup_url(form)))

    assert ('<label>cv <input name="cv" type="file" accept="application/pdf,image/*" '
            'required></label>') in shown


@pytest.mark.parametrize("name", ['"><script>alert(1)</script>', "a&b <i>"])
def test_hostile_names_and_options_stay_text_in_the_snippet(owner, form, name):
    form_update(form=form, field_rules=[
        {"name": name, "type": "select", "required": False, "options": [name]}])

    page = owner.get(setup_url(form)).content.decode()
    shown = snippet(owner.get(setup_url(form)))

    assert "<script>" not in page.split('<pre id="snippet-html">')[1].split("</pre>")[0]
    escaped = html.escape(name)
    assert f'<select name="{escaped}">' in shown
    assert f'<option value="{escaped}">{escaped}</option>' in shown


def test_a_rule_on_the_honeypot_or_a_control_field_is_named_on_its_row(owner, form):
    """The service's refusals (the honeypot is another setting) reach the row, never a 500."""
    form_update(form=form, honeypot_field="website")

    on_honeypot = owner.post(setup_url(form), rows({"name": "email"}, {"name": "website"}))
    on_control = owner.post(setup_url(form), rows({"name": "_subject", "required": True}))

    assert on_honeypot.status_code == 409
    assert re.search(r'id="rules-1-name_error"><p class="field-error" role="alert">“website” '
                     r"is both the form's honeypot", html.unescape(text(on_honeypot)))
    assert on_control.status_code == 400
    assert "“_subject” is a control field" in html.unescape(text(on_control))
    form.refresh_from_db()
    assert form.field_rules is None


def test_a_honeypot_a_rule_checks_is_named_by_the_settings_field(owner, form):
    form_update(form=form, field_rules=[{"name": "website", "type": "url"}])

    response = owner.post(f"/dashboard/forms/{form.pk}/settings", {
        "name": form.name, "slug": form.slug, "rateLimit": "10", "honeypotField": "website",
        "captchaProvider": "recaptcha", "spamFilter": "on"})

    assert response.status_code == 409, text(response)
    assert "is both the form's honeypot" in html.unescape(text(response))
    form.refresh_from_db()
    assert form.honeypot_field is None
