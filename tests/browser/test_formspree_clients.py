"""Formspree's real clients against a live server (contract, "Drop-in"): ``@formspree/core``
under Node and ``@formspree/ajax`` in Chromium, with only their endpoint changed, see a
success as a success and an error as the visitor-readable error, on the right field.

The field error is the one this server gives per field without field rules: a file of a type
the form's uploads refuse (415, details naming the field)."""

from __future__ import annotations

import json
import re

import pytest

from forms_app.services import form_create
from submissions.models import Submission
from tests.browser.conftest import StaticSite
from tests.browser.formspree_clients import (
    AJAX_SCRIPT,
    CORE,
    NPM_PACKAGES,
    ROOT,
    install_packages,
    run_node,
    version_of,
)
from tests.files.conftest import LocalStore

pytestmark = pytest.mark.django_db(transaction=True)

NOT_FOUND = "There is no form at this address."
REFUSED_TYPE = "Photo is text/plain, which this form does not accept."


@pytest.fixture(scope="module")
def packages():
    install_packages()


@pytest.fixture
def forms(user, settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "uploads": LocalStore(tmp_path / "up").setting()}
    contact = form_create(owner=user, name="Contact", slug="xayzabcd", spam_filter=False)
    photos = form_create(owner=user, name="Photos", spam_filter=False, file_uploads={
        "maxBytes": 100_000, "maxFiles": 1, "types": ["image/*"]})
    return contact, photos


@pytest.fixture
def ruled(user):
    """A form whose field rules the server checks (contract, "Field rules")."""
    return form_create(owner=user, name="Signup", spam_filter=False, field_rules=[
        {"name": "email", "type": "email", "required": True},
        {"name": "name", "type": "text", "required": True, "maxLength": 5}])


def test_the_installed_clients_are_the_versions_the_tests_name(packages):
    assert version_of(CORE) == "4.0.0"
    assert version_of(AJAX_SCRIPT.parents[1] / "package.json") == "1.1.5"
    ci = (ROOT / ".ci" / "run").read_text()
    assert all(package in ci for package in NPM_PACKAGES)


CORE_SCRIPT = """
import { createClient } from "@formspree/core";

const { base, slug, photos } = %s;
const client = createClient();
const out = {};
for (const endpoint of [base, base + "/api/v1"]) {
  const ok = await client.submitForm(slug, { name: "Ada", email: "ada@example.com" },
                                     { endpoint });
  const gone = await client.submitForm("no-such-form", { name: "Ada" }, { endpoint });
  const data = new FormData();
  data.append("name", "Ada");
  data.append("photo", new Blob(["just some text"], { type: "image/png" }), "me.png");
  const field = await client.submitForm(photos, data, { endpoint });
  out[endpoint] = {
    ok: { kind: ok.kind, next: ok.next },
    gone: { kind: gone.kind, form: gone.getFormErrors() },
    field: { kind: field.kind, photo: field.getFieldErrors("photo"),
             name: field.getFieldErrors("name") },
  };
}
console.log(JSON.stringify(out));
"""


def test_formspree_core_under_node(packages, live_server, forms):
    contact, photos = forms
    # Node resolves "localhost" to ::1 first; the live server listens on 127.0.0.1.
    base = live_server.url.replace("localhost", "127.0.0.1")
    setup = json.dumps({"base": base, "slug": contact.slug, "photos": photos.slug})

    results = run_node(CORE_SCRIPT % setup, "core_client")

    assert list(results) == [base, base + "/api/v1"]
    for seen in results.values():
        assert seen["ok"] == {"kind": "success", "next": "http://localhost:8000/thanks"}
        assert seen["gone"] == {"kind": "error", "form": [
            {"code": "FORM_NOT_FOUND", "message": NOT_FOUND}]}
        assert seen["field"]["kind"] == "error"
        assert seen["field"]["photo"] == [{"code": "UNSPECIFIED", "message": REFUSED_TYPE}]
        assert seen["field"]["name"] == []
    assert [dict(row.data) for row in Submission.objects.all()] == [
        {"name": "Ada", "email": "ada@example.com"}] * 2


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Contact</title></head>
<body>
<form id="contact">
  <div data-fs-error></div>
  <div data-fs-success></div>
  <label>Email <input name="email" type="email" data-fs-field></label>
  <label>Photo <input name="photo" type="file" data-fs-field></label>
  <span data-fs-error="photo"></span>
  <span data-fs-error="email"></span>
  <label>Name <input name="name" data-fs-field></label>
  <span data-fs-error="name"></span>
  <button type="submit">Send</button>
</form>
<script>
  window.formspree = window.formspree || function () {
    (formspree.q = formspree.q || []).push(arguments);
  };
  formspree("initForm", { formElement: "#contact", formId: %s, origin: %s });
</script>
<script>%s</script>
</body></html>"""


def ajax_page(page, live_server, form_id: str):
    """A customer's page on its own origin, with @formspree/ajax's script tag setup."""
    html = PAGE % (json.dumps(form_id), json.dumps(live_server.url), AJAX_SCRIPT.read_text())
    site = StaticSite(html)
    page.goto(site.url)
    return site


def test_formspree_ajax_shows_a_success_as_success(packages, page, live_server, forms):
    contact, _ = forms
    site = ajax_page(page, live_server, contact.slug)
    try:
        page.fill("input[name=email]", "ada@example.com")
        page.fill("input[name=name]", "Ada")
        page.click("button[type=submit]")
        success = page.locator("[data-fs-success][data-fs-active]")
        success.wait_for()

        assert success.inner_text() == "Thank you!"
        assert page.locator("[data-fs-error][data-fs-active]").count() == 0
        assert [dict(row.data) for row in Submission.objects.all()] == [
            {"email": "ada@example.com", "photo": "", "name": "Ada"}]  # no file chosen
    finally:
        site.close()


def test_formspree_ajax_shows_a_missing_form_in_words(packages, page, live_server, forms):
    site = ajax_page(page, live_server, "no-such-form")
    try:
        page.fill("input[name=name]", "Ada")
        page.click("button[type=submit]")
        banner = page.locator('[data-fs-error=""][data-fs-active]')
        banner.wait_for()

        assert banner.inner_text() == NOT_FOUND
        assert page.locator("[data-fs-success][data-fs-active]").count() == 0
    finally:
        site.close()


def test_formspree_ajax_shows_a_field_error_on_its_field(packages, page, live_server, forms):
    _, photos = forms
    site = ajax_page(page, live_server, photos.slug)
    try:
        page.fill("input[name=name]", "Ada")
        page.set_input_files("input[name=photo]", files=[
            {"name": "me.png", "mimeType": "image/png", "buffer": b"just some text"}])
        page.click("button[type=submit]")
        under_photo = page.locator('[data-fs-error="photo"][data-fs-active]')
        under_photo.wait_for()

        assert under_photo.inner_text() == REFUSED_TYPE
        assert page.locator("input[name=photo]").get_attribute("aria-invalid") == "true"
        assert page.locator("input[name=name]").get_attribute("aria-invalid") is None
        assert page.locator('[data-fs-error="name"][data-fs-active]').count() == 0
        assert not re.search(r"[a-z]+_[a-z]+", under_photo.inner_text())  # no machine code
        assert not Submission.objects.exists()
    finally:
        site.close()


RULES_SCRIPT = """
import { createClient } from "@formspree/core";

const { base, slug } = %s;
const answer = await createClient().submitForm(
  slug, { email: "not an address", name: "Ada" }, { endpoint: base });
console.log(JSON.stringify({ kind: answer.kind, email: answer.getFieldErrors("email"),
                             name: answer.getFieldErrors("name") }));
"""


def test_formspree_core_shows_a_field_rule_on_its_field(packages, live_server, ruled):
    base = live_server.url.replace("localhost", "127.0.0.1")

    seen = run_node(RULES_SCRIPT % json.dumps({"base": base, "slug": ruled.slug}), "rules")

    assert seen == {"kind": "error", "name": [], "email": [
        {"code": "TYPE_EMAIL", "message": "“email” must be a valid email address."}]}
    assert not Submission.objects.exists()


def test_formspree_ajax_shows_a_field_rule_on_its_field(packages, page, live_server, ruled):
    site = ajax_page(page, live_server, ruled.slug)
    try:
        page.fill("input[name=email]", "ada@example.com")
        page.fill("input[name=name]", "Ada Lovelace")
        page.click("button[type=submit]")
        under_name = page.locator('[data-fs-error="name"][data-fs-active]')
        under_name.wait_for()

        assert under_name.inner_text() == "“name” must be at most 5 characters long."
        assert page.locator("input[name=name]").get_attribute("aria-invalid") == "true"
        assert page.locator('[data-fs-error="email"][data-fs-active]').count() == 0
        assert page.locator("[data-fs-success][data-fs-active]").count() == 0
        assert not Submission.objects.exists()
    finally:
        site.close()
