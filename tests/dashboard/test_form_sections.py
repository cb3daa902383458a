"""A form's sections, each its own page, and the dashboard's writes: each answered with a
redirect (post/redirect/get), so a reload sends nothing again."""

import re
from datetime import UTC, datetime

import pytest

from forms_app.models import Form
from integrations.models import Integration
from integrations.services import integration_create
from pullapi.models import ApiKey
from submissions.models import Submission
from tests.conftest import add_submission


def text(response) -> str:
    # <wbr> marks where an address may wrap: no text of its own.
    return response.content.decode().replace("<wbr>", "")


@pytest.mark.parametrize("section", ["", "/spam", "/setup", "/integrations", "/settings"])
def test_each_section_is_its_own_page_with_the_tabs(owner, form, section):
    response = owner.get(f"/dashboard/forms/{form.pk}{section}")

    assert response.status_code == 200
    html = text(response)
    assert html.count('aria-current="page"') == 2  # the main menu's Forms and this tab
    assert f'href="/dashboard/forms/{form.pk}{section}" aria-current="page"' in html
    for tab in ("Inbox", "Spam", "Setup", "Integrations", "Settings"):
        assert f">{tab}" in html


@pytest.mark.parametrize("section", ["", "/spam", "/setup", "/integrations", "/settings"])
def test_another_owners_sections_are_404(owner, other_user, section):
    from forms_app.services import form_create

    theirs = form_create(owner=other_user, name="Theirs")

    assert owner.get(f"/dashboard/forms/{theirs.pk}{section}").status_code == 404


def test_the_settings_address_shows_the_settings_when_signed_out_and_back(client, user, form):
    from tests.conftest import PASSWORD

    path = f"/dashboard/forms/{form.pk}/settings"
    signed_out = client.get(path)
    assert signed_out["Location"] == f"/dashboard/login?next={path.replace('/', '%2F')}"

    back = client.post("/dashboard/login",
                       {"email": user.email, "password": PASSWORD, "next": path})
    assert back["Location"] == path
    page = client.get(path)
    assert page.status_code == 200
    assert "Save settings" in text(page)


def test_a_good_settings_save_redirects_to_the_settings(owner, form):
    response = owner.post(f"/dashboard/forms/{form.pk}/settings",
                          {"name": "Renamed", "rateLimit": "10"})

    assert response.status_code == 302
    assert response["Location"] == f"/dashboard/forms/{form.pk}/settings"
    assert "Settings saved." in text(owner.get(response["Location"]))


def test_a_failed_settings_save_keeps_what_was_typed_and_names_fields_as_the_page(owner, form):
    response = owner.post(f"/dashboard/forms/{form.pk}/settings", {
        "name": "Typed name",
        "redirectUrl": "not a url",
        "allowedOrigins": "https://ok.example\nnot an origin",
        "rateLimit": "25",
        "blockedWords": "casino",
    })

    assert response.status_code == 400
    html = text(response)
    assert 'value="Typed name"' in html
    assert ">\nhttps://ok.example\nnot an origin</textarea>" in html
    assert 'value="25"' in html
    assert ">\ncasino</textarea>" in html
    message = re.search(r'<li class="error">(.*?)</li>', html, re.S).group(1)
    assert message.startswith("Settings not saved. ")
    assert "Allowed origins: " in message
    assert "Redirect after an HTML form post: " in message
    for api_name in ("allowedOrigins", "redirectUrl", "rateLimit"):
        assert api_name not in message
    assert html.count('class="field-error"') == 2  # each under its own field
    form.refresh_from_db()
    assert (form.name, form.allowed_origins, form.rate_limit) == ("Contact", [], 10)


def test_upload_setting_errors_are_named_and_placed_by_the_input_typed_in(owner, form):
    response = owner.post(f"/dashboard/forms/{form.pk}/settings", {
        "name": "Contact", "rateLimit": "10", "fileUploads": "on",
        "maxMegabytes": "0", "maxFiles": "0", "uploadTypes": "application/pdf\nnot a type",
    })

    assert response.status_code == 400
    html = text(response)
    message = re.search(r'<li class="error">(.*?)</li>', html, re.S).group(1)
    assert "Keep uploaded files" not in message
    assert "Largest file (MB): Ensure this value is greater than or equal to 0.01." in message
    assert "Files per submission: Ensure this value is greater than or equal to 1." in message
    assert ".;" not in message  # sentences, not validator texts glued together
    # Each message sits right after its own input (and its hint), none under the checkbox.
    checkbox = html.index('id="fileUploads"')
    for field in ("maxMegabytes", "maxFiles"):
        start = html.index(f'id="{field}"')
        following = html[start:html.index("<label", start)]
        assert following.count('class="field-error"') == 1, field
        assert f'<div id="{field}_error">' in following
    assert 'aria-describedby="maxMegabytes-hint"' in html  # the hint it has, by its id
    assert 'class="field-error"' not in html[checkbox:html.index('for="maxMegabytes"')]
    assert 'value="0"' in html and "not a type</textarea>" in html
    form.refresh_from_db()
    assert form.file_uploads is None


def test_an_unknown_upload_type_is_named_by_its_input(owner, form):
    response = owner.post(f"/dashboard/forms/{form.pk}/settings", {
        "name": "Contact", "rateLimit": "10", "fileUploads": "on",
        "uploadTypes": "application/pdf\nnot a type",
    })

    assert response.status_code == 400
    message = re.search(r'<li class="error">(.*?)</li>', text(response), re.S).group(1)
    assert "Accepted file types: Each type must be a MIME type" in message
    form.refresh_from_db()
    assert form.file_uploads is None


def test_ticking_keep_uploaded_files_alone_saves_the_defaults_it_shows(owner, form):
    """The page shows the defaults, and a post with the box ticked and the rest empty (an
    owner who cleared them) takes them: never a refusal for fields left as they were."""
    page = text(owner.get(f"/dashboard/forms/{form.pk}/settings"))
    assert 'value="10"' in page[page.index('id="maxMegabytes"') - 200:]
    response = owner.post(f"/dashboard/forms/{form.pk}/settings", {
        "name": "Contact", "rateLimit": "10", "fileUploads": "on",
        "maxMegabytes": "", "maxFiles": "", "uploadTypes": ""})

    assert response.status_code == 302
    form.refresh_from_db()
    assert form.file_uploads == {"maxBytes": 10 * 1024 * 1024, "maxFiles": 3,
                                 "types": ["image/*", "application/pdf"]}


def test_the_largest_file_is_entered_and_shown_in_mb(owner, form):
    response = owner.post(f"/dashboard/forms/{form.pk}/settings", {
        "name": "Contact", "rateLimit": "10", "fileUploads": "on",
        "maxMegabytes": "2.5", "maxFiles": "2", "uploadTypes": "application/pdf"})

    assert response.status_code == 302
    form.refresh_from_db()
    assert form.file_uploads["maxBytes"] == 2_621_440
    page = text(owner.get(f"/dashboard/forms/{form.pk}/settings"))
    assert 'value="2.5"' in page


def test_a_settings_error_from_the_django_form_is_labelled_too(owner, form):
    response = owner.post(f"/dashboard/forms/{form.pk}/settings",
                          {"name": "Contact", "rateLimit": "ten"})

    assert response.status_code == 400
    message = re.search(r'<li class="error">(.*?)</li>', text(response), re.S).group(1)
    assert message == ("Settings not saved. Rate limit (submissions per minute per visitor): "
                       "Enter a whole number.")


def test_the_setup_snippet_has_the_honeypot_only_when_the_form_has_one(owner, form):
    without = text(owner.get(f"/dashboard/forms/{form.pk}/setup"))
    form.honeypot_field = "_trap"
    form.save()
    with_one = text(owner.get(f"/dashboard/forms/{form.pk}/setup"))

    assert "_gotcha" not in without and "display:none" not in without
    assert "&lt;input name=&quot;_trap&quot; style=&quot;display:none&quot;" in with_one


def test_the_documented_and_example_snippets_add_no_honeypot_by_default():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    readme = (root / "docs" / "api.md").read_text()
    example = (root / "examples" / "contact.html").read_text()

    html_block = readme[readme.index("<!-- 2. A plain HTML form"):]
    html_block = html_block[:html_block.index("```")]
    assert "_gotcha" not in html_block
    assert 'name="_gotcha"' not in example and "honeypot" in example


# --- Post/redirect/get on every write ------------------------------------------------------


def test_every_dashboard_write_answers_with_a_redirect(owner, user, form, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    submission = add_submission(form, {"name": "Ada"})
    spare = add_submission(form, {"name": "Grace"})
    hook = integration_create(owner=user, type="WEBHOOK",
                              config={"url": "https://hooks.example.com/x"})
    posts = [
        ("/dashboard/forms", {"name": "Second"}),
        (f"/dashboard/forms/{form.pk}/settings", {"name": "Contact", "rateLimit": "10"}),
        (f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/mark", {"mark": "spam"}),
        (f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/mark",
         {"mark": "not-spam", "folder": "spam"}),
        (f"/dashboard/forms/{form.pk}/submissions/bulk",
         {"ids": [str(spare.pk)], "action": "read"}),
        (f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/delete", {}),
        ("/dashboard/integrations/new", {"type": "WEBHOOK", "url": "https://h.example.com/y"}),
        (f"/dashboard/integrations/{hook.pk}/toggle", {}),
        ("/dashboard/settings/api-keys/new", {"name": "Sync", "forms": [str(form.pk)]}),
        ("/dashboard/account/time-zone", {"timeZone": "Europe/Paris"}),
        (f"/dashboard/integrations/{hook.pk}/delete", {}),
    ]
    for path, data in posts:
        response = owner.post(path, data)
        assert response.status_code in (302, 303), (path, response.status_code)
        assert owner.get(response["Location"]).status_code == 200, path

    assert Form.objects.count() == 2
    assert Integration.objects.filter(type="WEBHOOK").count() == 1
    assert ApiKey.objects.count() == 1


def test_a_reload_after_creating_a_key_creates_no_second_one(owner, form):
    created = owner.post("/dashboard/settings/api-keys/new",
                         {"name": "Sync", "forms": [str(form.pk)]})
    landing = created["Location"]

    first = text(owner.get(landing))
    reloaded = text(owner.get(landing))

    assert ApiKey.objects.count() == 1
    assert 'id="new-key"' in first and 'id="new-key"' not in reloaded


def test_a_shown_secret_cookie_is_for_its_owner_only(owner, user, other_user, form):
    from django.test import Client

    from accounts.services import token_for

    created = owner.post("/dashboard/settings/api-keys/new",
                         {"name": "Sync", "forms": [str(form.pk)]})
    stolen = created.cookies["ff_reveal"].value
    someone = Client()
    someone.cookies["ff_token"] = str(token_for(other_user))
    someone.cookies["ff_reveal"] = stolen

    assert 'id="new-key"' not in text(someone.get("/dashboard/settings/api-keys"))


# --- The inbox: read state and bulk actions -------------------------------------------------


def test_opening_a_submission_marks_it_read(owner, form):
    submission = add_submission(form, {"name": "Ada"})
    inbox = text(owner.get(f"/dashboard/forms/{form.pk}"))
    assert '<tr class="unread">' in inbox and ">Unread</span>" in inbox

    owner.get(f"/dashboard/forms/{form.pk}/submissions/{submission.pk}")

    submission.refresh_from_db()
    assert submission.read_at is not None
    assert '<tr class="unread">' not in text(owner.get(f"/dashboard/forms/{form.pk}"))


def bulk(owner, form, action, *chosen, **extra):
    return owner.post(f"/dashboard/forms/{form.pk}/submissions/bulk",
                      {"ids": [str(row.pk) for row in chosen], "action": action, **extra})


def test_bulk_read_unread_spam_and_delete(owner, form):
    ada, grace, linus = (add_submission(form, {"name": name}) for name in ("Ada", "Grace",
                                                                           "Linus"))

    assert bulk(owner, form, "read", ada, grace)["Location"] == f"/dashboard/forms/{form.pk}"
    assert set(Submission.objects.filter(read_at__isnull=False).values_list("pk", flat=True)
               ) == {ada.pk, grace.pk}
    bulk(owner, form, "unread", grace)
    assert Submission.objects.filter(read_at__isnull=False).get() == ada

    spam = bulk(owner, form, "spam", ada, grace)
    assert spam["Location"] == f"/dashboard/forms/{form.pk}"
    assert set(Submission.objects.filter(status="spam")) == {ada, grace}
    rescued = bulk(owner, form, "not-spam", grace, folder="spam")
    assert rescued["Location"] == f"/dashboard/forms/{form.pk}/spam"
    assert Submission.objects.get(pk=grace.pk).status == "inbox"

    bulk(owner, form, "delete", ada, linus)
    assert list(Submission.objects.all()) == [grace]
    assert "2 submissions deleted." in text(owner.get(f"/dashboard/forms/{form.pk}"))


def test_bulk_actions_touch_only_the_owners_form(owner, form, other_user):
    from forms_app.services import form_create

    theirs = add_submission(form_create(owner=other_user, name="Theirs"), {"name": "Eve"})

    bulk(owner, form, "delete", theirs)

    assert Submission.objects.filter(pk=theirs.pk).exists()


def test_a_bulk_post_without_a_choice_says_so(owner, form):
    response = owner.post(f"/dashboard/forms/{form.pk}/submissions/bulk", {"action": "delete"})

    assert response.status_code == 302
    assert "Choose one or more submissions" in text(owner.get(response["Location"]))


def test_exporting_the_chosen_submissions(owner, form):
    ada = add_submission(form, {"name": "Ada", "tags": ["x", "y"]})
    add_submission(form, {"name": "Grace"})
    linus = add_submission(form, {"name": "Linus"})

    chosen = bulk(owner, form, "export", ada, linus)
    assert chosen.status_code == 302
    assert "csrfmiddlewaretoken" not in chosen["Location"]
    response = owner.get(chosen["Location"])

    body = b"".join(response.streaming_content).decode()
    assert "Ada" in body and "Linus" in body and "Grace" not in body
    assert '"x, y"' in body


# --- Values and times -----------------------------------------------------------------------


def test_the_inbox_writes_values_as_the_export_does(owner, form):
    from submissions.export import safe_cell

    add_submission(form, [["tags", ["design", "seo"]], ["utm", {"utm_source": "ad"}],
                          ["agree", True]])

    html = text(owner.get(f"/dashboard/forms/{form.pk}"))

    assert safe_cell(["design", "seo"]) == "design, seo"  # the export's cell
    assert '<span class="value-text">design, seo</span>' in html
    assert "{&quot;utm_source&quot;: &quot;ad&quot;}" in html
    assert '<span class="value-text">true</span>' in html
    assert "[&#x27;design&#x27;" not in html and "&#x27;utm_source&#x27;" not in html


def test_a_long_value_is_cut_with_the_rest_behind_details(owner, form):
    add_submission(form, {"message": "word " * 600})

    html = text(owner.get(f"/dashboard/forms/{form.pk}"))

    assert '<details class="value"><summary>' in html
    assert "show all 3000 characters" in html
    start = ("word " * 32).strip()
    assert f'<summary><span class="value-text">{start}</span>…' in html
    assert f'<div class="value-text">{"word " * 600}</div>' in html


def test_times_are_in_the_owners_zone_with_the_zone_named(owner, user, form):
    add_submission(form, {"name": "Ada"}, at=datetime(2026, 11, 24, 21, 46, 31, tzinfo=UTC))
    type(user).objects.filter(pk=user.pk).update(time_zone="Europe/Paris")

    html = text(owner.get(f"/dashboard/forms/{form.pk}"))

    assert '<time datetime="2026-11-24T21:46:31.000Z">2026-11-24 22:46 CET</time>' in html
    assert "Times are shown in Europe/Paris" in html
    assert "Days run midnight to midnight in Europe/Paris" in html


def test_search_days_are_the_owners_days(owner, user, form):
    # 23:30 UTC on the 1st is already the 2nd in Paris.
    add_submission(form, {"name": "Ada"}, at=datetime(2026, 11, 1, 23, 30, tzinfo=UTC))
    url = f"/dashboard/forms/{form.pk}"

    assert "Ada" in text(owner.get(url, {"first_day": "2026-11-01", "last_day": "2026-11-01"}))
    type(user).objects.filter(pk=user.pk).update(time_zone="Europe/Paris")
    assert "1 submission matches." not in text(
        owner.get(url, {"first_day": "2026-11-01", "last_day": "2026-11-01"}))
    assert "1 submission matches." in text(
        owner.get(url, {"first_day": "2026-11-02", "last_day": "2026-11-02"}))


def test_the_account_page_sets_the_time_zone(owner, user):
    page = text(owner.get("/dashboard/account"))
    assert "Not chosen yet" in page and 'id="time-zone-auto"' in page

    response = owner.post("/dashboard/account/time-zone", {"timeZone": "America/New_York"})

    assert response["Location"] == "/dashboard/account"
    user.refresh_from_db()
    assert user.time_zone == "America/New_York"
    after = text(owner.get("/dashboard/account"))
    assert '<option value="America/New_York" selected>' in after
    assert 'id="time-zone-auto"' not in after


def test_the_browsers_zone_fills_only_an_unset_one(owner, user):
    owner.post("/dashboard/account/time-zone", {"timeZone": "Asia/Tokyo", "auto": "on"})
    user.refresh_from_db()
    assert user.time_zone == "Asia/Tokyo"

    owner.post("/dashboard/account/time-zone", {"timeZone": "Europe/Paris", "auto": "on"})
    user.refresh_from_db()
    assert user.time_zone == "Asia/Tokyo"


def test_an_unknown_zone_is_refused(owner, user):
    response = owner.post("/dashboard/account/time-zone", {"timeZone": "Mars/Olympus"})

    assert response.status_code == 302
    user.refresh_from_db()
    assert user.time_zone == ""


# --- The chart and the integrations ---------------------------------------------------------


def test_the_inbox_chart_has_axes_and_counts(owner, form):
    for _ in range(3):
        add_submission(form, {"name": "Ada"})

    html = text(owner.get(f"/dashboard/forms/{form.pk}"))
    chart = html[html.index('<figure class="chart">'):html.index("</figure>")]

    assert chart.count("<rect") == 30
    assert '<g class="grid">' in chart and '<line class="axis"' in chart
    assert ">3</text>" in chart and ">0</text>" in chart  # the count axis
    assert "3 submissions from" in chart and "the busiest day had 3" in chart


def test_integrations_are_named_by_destination_with_errors_in_words(owner, user, form,
                                                                      settings):
    from integrations.models import Delivery, DeliveryState

    settings.EMAIL_PROVIDER_API_URL = "http://127.0.0.1:9"  # nothing listens: no mail leaves

    hook = integration_create(owner=user, type="WEBHOOK",
                              config={"url": "https://hooks.example.com/x"})
    integration_create(owner=user, type="EMAIL", config={
        "apiKey": "re_1", "fromEmail": "f@example.com", "toEmail": "a@b.example"})
    Integration.objects.filter(pk=hook.pk).update(
        last_error="Connection failed: NewConnectionError", status="failing")
    submission = add_submission(form, {"name": "Ada"})
    Delivery.objects.filter(submission=submission, integration=hook).update(
        state=DeliveryState.FAILED, last_error="Connection failed: NewConnectionError")

    listing = text(owner.get("/dashboard/integrations"))
    ledger = text(owner.get(f"/dashboard/forms/{form.pk}/submissions/{submission.pk}"))

    for html in (listing, ledger):
        assert "Webhook to hooks.example.com" in html
        assert "Email to a@b.example" in html
        assert ("<summary>The destination could not be reached: nothing answered at that "
                "address.</summary><code>Connection failed: NewConnectionError</code>") in html
    assert "Never Run" not in listing and "Not run yet" in listing


def test_a_failed_integration_names_the_field_as_its_card(owner):
    response = owner.post("/dashboard/integrations/new", {"type": "WEBHOOK", "url": "http://x"})

    message = re.search(r'<li class="error">(.*?)</li>', text(response), re.S).group(1)
    assert message.startswith("Integration not created. HTTPS URL: ")
    assert "config.url" not in message


def test_a_weak_password_is_named_as_the_page_labels_it(client, db):
    response = client.post("/dashboard/signup",
                           {"email": "a@example.com", "password": "password"})

    message = re.search(r'<li class="error">(.*?)</li>', text(response), re.S).group(1)
    assert message.startswith("Password: ")


def test_a_failed_test_send_says_what_happened_in_words(owner, user, allow_private_receiver):
    from tests.fakes import Reply

    allow_private_receiver.handler = lambda _request: Reply(500)
    hook = integration_create(owner=user, type="WEBHOOK",
                              config={"url": allow_private_receiver.url})

    response = owner.post(f"/dashboard/integrations/{hook.pk}/test", follow=True)

    html = text(response)
    assert ("Test event not delivered. The destination had an error of its own (a 5xx answer)."
            in html)
    assert "<code>HTTP 500</code>" in html  # the recorded text, behind <details>


def test_integration_messages_name_the_destination(owner, user):
    hook = integration_create(owner=user, type="WEBHOOK",
                              config={"url": "https://hooks.example.com/x"})

    disabled = owner.post(f"/dashboard/integrations/{hook.pk}/toggle", follow=True)
    deleted = owner.post(f"/dashboard/integrations/{hook.pk}/delete", follow=True)

    assert "Webhook to hooks.example.com: disabled." in text(disabled)
    assert "Webhook to hooks.example.com: deleted." in text(deleted)


def test_the_charts_count_the_owners_days(owner, user, form, clock):
    from zoneinfo import ZoneInfo

    from submissions.selectors import activity

    # 23:30 UTC on the 24th is the 25th in Paris, the last day of the chart there.
    clock.current = datetime(2026, 11, 25, 12, tzinfo=UTC)
    add_submission(form, {"name": "Ada"}, at=datetime(2026, 11, 24, 23, 30, tzinfo=UTC))

    in_utc = activity([form.pk])[form.pk].daily
    in_paris = activity([form.pk], zone=ZoneInfo("Europe/Paris"))[form.pk].daily

    assert in_utc[-2:] == [1, 0] and in_paris[-2:] == [0, 1]
    type(user).objects.filter(pk=user.pk).update(time_zone="Europe/Paris")
    assert "(days in Europe/Paris)" in text(owner.get(f"/dashboard/forms/{form.pk}"))


def test_the_settings_page_answers_get_and_post_only(owner, form):
    assert owner.put(f"/dashboard/forms/{form.pk}/settings").status_code == 405


@pytest.mark.parametrize("url", ["http://127.0.0.1:8102/hook", "https://127.0.0.1:8102/hook",
                                 "https://localhost/hook"])
def test_a_local_receiver_refused_names_the_setting_that_allows_it(owner, settings, url):
    """A developer on dev.py start meets the refusal first: it says how to allow it."""
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    response = owner.post("/dashboard/integrations/new", {"type": "WEBHOOK", "url": url})

    message = re.search(r'<li class="error">(.*?)</li>', text(response), re.S).group(1)
    assert "WEBHOOK_ALLOW_PRIVATE_NETWORKS=true" in message


def test_the_settings_change_the_forms_address(owner, form, client):
    response = owner.post(f"/dashboard/forms/{form.pk}/settings",
                          {"name": "Contact", "rateLimit": "10", "slug": "xayzabcd"})

    assert response.status_code == 302
    assert 'value="xayzabcd"' in text(owner.get(f"/dashboard/forms/{form.pk}/settings"))
    assert client.post("/f/xayzabcd", {"email": "a@example.com"},
                       HTTP_ACCEPT="application/json").status_code == 200


def test_an_address_another_form_has_is_refused_by_the_field(owner, user, form):
    from forms_app.services import form_create

    form_create(owner=user, name="Other", slug="taken-one")
    response = owner.post(f"/dashboard/forms/{form.pk}/settings",
                          {"name": "Contact", "rateLimit": "10", "slug": "taken-one"})

    assert response.status_code == 409
    assert "Form address: Another form already has this slug." in text(response)
    assert Form.objects.get(pk=form.pk).slug == form.slug


def test_an_address_of_the_wrong_shape_is_refused_by_the_field(owner, form):
    response = owner.post(f"/dashboard/forms/{form.pk}/settings",
                          {"name": "Contact", "rateLimit": "10", "slug": "a b"})

    assert response.status_code == 400
    assert "Form address:" in text(response)
    assert Form.objects.get(pk=form.pk).slug == form.slug


def test_an_empty_address_keeps_the_one_the_form_has(owner, form):
    owner.post(f"/dashboard/forms/{form.pk}/settings",
               {"name": "Contact", "rateLimit": "10", "slug": ""})

    assert Form.objects.get(pk=form.pk).slug == form.slug
