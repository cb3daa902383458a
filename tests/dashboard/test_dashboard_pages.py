import pytest
from django.core import mail

from forms_app.models import Form
from integrations.models import Integration
from pullapi.models import ApiKey
from submissions.models import Submission
from tests.conftest import PASSWORD, last_code, make_user, submit
from tests.conftest import CommitBrowserClient as Client


def page_text(response) -> str:
    # <wbr> marks where an address may wrap: no text of its own.
    return response.content.decode().replace("<wbr>", "")


@pytest.mark.parametrize(
    "path", ["/dashboard/", "/dashboard/integrations", "/dashboard/settings/api-keys"]
)
def test_pages_need_login(client, db, path):
    response = client.get(path)

    assert response.status_code == 302
    assert response["Location"] == f"/dashboard/login?next={path.replace('/', '%2F')}"


def test_sign_up_verify_and_land_on_dashboard(client, db):
    response = client.post(
        "/dashboard/signup", {"email": "new@example.com", "password": "a long passphrase"}
    )
    assert response["Location"] == "/dashboard/verify?email=new%40example.com"

    verified = client.post(
        "/dashboard/verify", {"email": "new@example.com", "code": last_code("new@example.com")}
    )

    assert verified.status_code == 302
    assert verified.cookies["ff_token"]["httponly"]
    assert client.get("/dashboard/").status_code == 200


def test_weak_password_shows_a_message(client, db):
    response = client.post("/dashboard/signup", {"email": "a@example.com", "password": "123"})

    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    assert "password" in page_text(response)


def test_wrong_code_shows_a_message(client, db):
    client.post("/dashboard/signup", {"email": "new@example.com", "password": "a long passphrase"})

    response = client.post("/dashboard/verify", {"email": "new@example.com", "code": "000000"})

    assert response.status_code == 400
    assert "The code is wrong or has expired." in page_text(response)


def test_resend_from_the_verify_page(client, db, clock):
    client.post("/dashboard/signup", {"email": "new@example.com", "password": "a long passphrase"})
    clock.advance(seconds=61)

    client.post("/dashboard/verify/resend", {"email": "new@example.com"})

    assert len(mail.outbox) == 2


def test_wrong_password_shows_a_message(client, user):
    response = client.post("/dashboard/login", {"email": user.email, "password": "nope-nope"})

    assert response.status_code == 401
    assert "The email or password is incorrect." in page_text(response)


def test_unverified_login_goes_to_verification(client, db):
    make_user("pending@example.com", verified=False)

    response = client.post(
        "/dashboard/login", {"email": "pending@example.com", "password": PASSWORD}
    )

    assert response["Location"] == "/dashboard/verify?email=pending%40example.com"


def test_login_returns_to_next_page_but_never_off_site(client, user):
    inside = client.post(
        "/dashboard/login",
        {"email": user.email, "password": PASSWORD, "next": "/dashboard/integrations"},
    )
    outside = Client().post(
        "/dashboard/login",
        {"email": user.email, "password": PASSWORD, "next": "https://evil.example"},
    )

    assert inside["Location"] == "/dashboard/integrations"
    assert outside["Location"] == "/dashboard/"


def test_logout_revokes_the_cookie_token(owner):
    token = owner.cookies["ff_token"].value

    owner.post("/dashboard/logout")

    assert Client().get("/api/auth/me", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401
    assert owner.get("/dashboard/").status_code == 302


def test_dashboard_forms_need_csrf_tokens(user):
    browser = Client(enforce_csrf_checks=True)
    browser.post("/dashboard/login", {"email": user.email, "password": PASSWORD})  # 403 too
    from accounts.services import token_for

    browser.cookies["ff_token"] = str(token_for(user))

    response = browser.post("/dashboard/forms", {"name": "Sneaky"})

    assert response.status_code == 403
    assert not Form.objects.exists()


def test_home_lists_forms_with_counts_and_usage(owner, form, public, user):
    submit(public, form)
    type(user).objects.filter(pk=user.pk).update(monthly_submission_limit=50)

    text = page_text(owner.get("/dashboard/"))

    assert "Contact" in text
    assert "<strong>1</strong> of <strong>50</strong>" in text


def test_create_form_and_see_its_snippets(owner):
    response = owner.post("/dashboard/forms", {"name": "Newsletter"})
    form = Form.objects.get()

    assert response["Location"] == f"/dashboard/forms/{form.pk}/setup"
    text = page_text(owner.get(response["Location"]))
    assert form.endpoint in text
    assert "fetch(" in text
    assert "&lt;form action=" in text
    # The fetch() snippet sends one Idempotency-Key per submission.
    assert "crypto.randomUUID()" in text
    assert '"Idempotency-Key": idempotencyKey' in text.replace("&quot;", '"')


def test_settings_are_saved_through_the_same_validation(owner, form):
    owner.post(
        f"/dashboard/forms/{form.pk}/settings",
        {
            "name": "Renamed",
            "redirectUrl": "https://site.example/thanks",
            "allowedOrigins": "https://site.example\nhttp://localhost:3000",
            "rateLimit": "25",
            "honeypotField": "_gotcha",
            "captchaProvider": "turnstile",
            "recaptchaSecret": "secret",
            "retentionDays": "90",
        },
    )
    form.refresh_from_db()

    assert (form.name, form.rate_limit, form.honeypot_field) == ("Renamed", 25, "_gotcha")
    assert form.retention_days == 90
    assert form.captcha_provider == "turnstile"
    assert form.allowed_origins == ["https://site.example", "http://localhost:3000"]
    assert form.recaptcha_secret == "secret"


def test_invalid_settings_show_a_message_and_change_nothing(owner, form):
    response = owner.post(
        f"/dashboard/forms/{form.pk}/settings", {"name": "X", "rateLimit": "0"}, follow=True
    )

    assert "Settings not saved" in page_text(response)
    form.refresh_from_db()
    assert (form.name, form.rate_limit) == ("Contact", 10)


def test_retention_out_of_range_is_not_saved(owner, form):
    response = owner.post(f"/dashboard/forms/{form.pk}/settings",
                          {"name": "Contact", "rateLimit": "10", "retentionDays": "0"},
                          follow=True)

    assert "Settings not saved" in page_text(response)
    form.refresh_from_db()
    assert form.retention_days is None


def test_submissions_table_pages_and_deletes(owner, form, public, settings):
    for i in range(25):
        submit(public, form, {"n": str(i)}, REMOTE_ADDR=f"10.0.0.{i + 1}")

    first = page_text(owner.get(f"/dashboard/forms/{form.pk}"))
    second = page_text(owner.get(f"/dashboard/forms/{form.pk}?page=2"))
    assert "Page 1 of 2" in first and "Page 2 of 2" in second
    victim = Submission.objects.order_by("submitted_at").first()

    owner.post(f"/dashboard/forms/{form.pk}/submissions/{victim.pk}/delete", {"page": "2"})

    assert not Submission.objects.filter(pk=victim.pk).exists()


def test_huge_page_number_is_an_empty_page(owner, form):
    response = owner.get(f"/dashboard/forms/{form.pk}?page=45796896067897611582963712")

    assert response.status_code == 200


def test_other_users_form_is_404(owner, other_user):
    from forms_app.services import form_create

    theirs = form_create(owner=other_user, name="Theirs")

    assert owner.get(f"/dashboard/forms/{theirs.pk}").status_code == 404
    assert owner.post(f"/dashboard/forms/{theirs.pk}/delete").status_code == 404
    assert Form.objects.filter(pk=theirs.pk).exists()


def test_delete_form(owner, form):
    owner.post(f"/dashboard/forms/{form.pk}/delete")

    assert not Form.objects.exists()


def test_webhook_created_from_the_page_shows_its_secret_once(owner):
    created = owner.post(
        "/dashboard/integrations/new", {"type": "WEBHOOK", "url": "https://hooks.example.com/x"}
    )
    secret = Integration.objects.get().secrets["signingSecret"]

    assert created.status_code == 302
    assert created["Location"] == "/dashboard/integrations"
    assert secret not in created.cookies["ff_reveal"].value  # encrypted on its way
    assert secret in page_text(owner.get(created["Location"]))
    assert secret not in page_text(owner.get("/dashboard/integrations"))  # a reload


def test_invalid_integration_shows_the_api_error_as_a_message(owner):
    response = owner.post("/dashboard/integrations/new", {"type": "WEBHOOK", "url": "http://x"})

    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    assert "Integration not created" in page_text(response)


def test_a_failed_integration_create_keeps_what_was_typed_in_its_card(owner, form):
    response = owner.post("/dashboard/integrations/new", {
        "type": "EMAIL", "apiKey": "re_secret_typed", "fromEmail": "Forms <f@example.com>",
        "toEmail": "not an address", "subject": "New <lead>", "autoresponseText": "Thanks!",
        "autoresponseEmailField": "contact", "formId": str(form.pk),
    })

    assert response.status_code == 400
    html = response.content.decode()
    email_card = html[html.index("Add email notifications"):]
    email_card = email_card[:email_card.index("</form>")]
    assert 'value="Forms &lt;f@example.com&gt;"' in email_card
    assert 'value="not an address"' in email_card
    assert 'value="New &lt;lead&gt;"' in email_card
    assert ">Thanks!</textarea>" in email_card
    assert 'value="contact"' in email_card
    assert f'<option value="{form.pk}" selected>' in email_card
    assert "re_secret_typed" not in html  # a password input is typed again, never sent back
    webhook_card = html[html.index("Add a webhook"):]
    webhook_card = webhook_card[:webhook_card.index("</form>")]
    assert "selected" not in webhook_card and 'value="not an address"' not in webhook_card


def test_a_failed_webhook_create_keeps_its_address_and_events(owner):
    response = owner.post("/dashboard/integrations/new", {
        "type": "WEBHOOK", "url": "http://plain.example.com/hook",
        "events": ["submission.deleted", "submission.spam"],
    })

    assert response.status_code == 400
    html = response.content.decode()
    assert 'value="http://plain.example.com/hook"' in html
    assert 'value="submission.created">' in html
    assert 'value="submission.deleted" checked>' in html
    assert 'value="submission.spam" checked>' in html
    fresh = owner.get("/dashboard/integrations").content.decode()
    assert 'value="submission.created" checked>' in fresh
    assert 'value="submission.deleted">' in fresh
    assert 'value="email">' in fresh


def test_email_integration_from_the_page(owner, form):
    owner.post(
        "/dashboard/integrations/new",
        {
            "type": "EMAIL",
            "apiKey": "re_123456",
            "fromEmail": "f@example.com",
            "toEmail": "t@example.com",
            "formId": str(form.pk),
        },
    )

    integration = Integration.objects.get()
    assert integration.form_id == form.pk
    text = page_text(owner.get("/dashboard/integrations"))
    assert "t@example.com" in text
    assert "re_123456" not in text


def test_email_autoresponse_from_the_page(owner):
    owner.post("/dashboard/integrations/new", {
        "type": "EMAIL", "apiKey": "re_123456", "fromEmail": "f@example.com",
        "toEmail": "t@example.com", "autoresponseSubject": "Thanks",
        "autoresponseText": "We will answer soon.", "autoresponseEmailField": "contact",
    })

    config = Integration.objects.get().config
    assert config["autoresponse"] == {"subject": "Thanks", "text": "We will answer soon."}
    assert config["autoresponseEmailField"] == "contact"


@pytest.mark.parametrize(("kind", "label"), [("SLACK", "Slack"), ("DISCORD", "Discord")])
def test_chat_integrations_from_the_page(owner, kind, label):
    page = page_text(owner.get("/dashboard/integrations"))
    assert f"Post to {label}" in page

    owner.post("/dashboard/integrations/new",
               {"type": kind, "webhookUrl": "https://hooks.example.com/services/abc/secret-1"})

    integration = Integration.objects.get()
    assert integration.type == kind
    text = page_text(owner.get("/dashboard/integrations"))
    assert f"{label} channel" in text
    assert "secret-1" not in text.replace("****et-1", "")


def test_toggle_test_and_delete_an_integration(owner, user, allow_private_receiver):
    from integrations.services import integration_create

    receiver = allow_private_receiver
    integration = integration_create(owner=user, type="WEBHOOK", config={"url": receiver.url})

    owner.post(f"/dashboard/integrations/{integration.pk}/toggle")
    integration.refresh_from_db()
    assert integration.enabled is False
    tested = owner.post(f"/dashboard/integrations/{integration.pk}/test", follow=True)
    assert "Test event delivered." in page_text(tested)
    assert "healthy" in page_text(tested)
    owner.post(f"/dashboard/integrations/{integration.pk}/delete")
    assert not Integration.objects.exists()


def test_owner_retries_failed_deliveries(
    owner, user, form, public, allow_private_receiver, settings
):
    from integrations.models import Delivery
    from integrations.services import integration_create
    from tests.conftest import submit
    from tests.fakes import Reply

    settings.DELIVERY_RETRY_DELAYS = []  # the first failure is final
    receiver = allow_private_receiver
    integration = integration_create(owner=user, type="WEBHOOK", config={"url": receiver.url})
    receiver.handler = lambda _request: Reply(500)
    submit(public, form, {"n": "1"})
    submit(public, form, {"n": "2"})
    listed = page_text(owner.get("/dashboard/integrations"))
    receiver.handler = lambda _request: Reply(200)

    retried = owner.post(f"/dashboard/integrations/{integration.pk}/retry", follow=True)

    assert "2 failed deliveries" in listed and "Retry failed" in listed
    assert "2 failed deliveries will be sent again." in page_text(retried)
    assert set(Delivery.objects.values_list("state", flat=True)) == {"delivered"}
    assert len(receiver.requests) == 4
    assert "Retry failed" not in page_text(retried)


def test_retry_of_a_disabled_integration_is_refused(owner, user, allow_private_receiver):
    from integrations.services import integration_create

    integration = integration_create(
        owner=user, type="WEBHOOK", config={"url": allow_private_receiver.url}
    )
    integration.enabled = False
    integration.save()

    response = owner.post(f"/dashboard/integrations/{integration.pk}/retry", follow=True)

    assert "Enable the integration first" in page_text(response)


def test_retry_of_another_owners_integration_is_404(owner, other_user):
    from integrations.services import integration_create

    theirs = integration_create(
        owner=other_user,
        type="EMAIL",
        config={"apiKey": "re_x", "fromEmail": "a@example.com", "toEmail": "b@example.com"},
    )

    assert owner.post(f"/dashboard/integrations/{theirs.pk}/retry").status_code == 404


def test_google_connect_without_configuration_is_a_message(owner, settings):
    settings.GOOGLE_OAUTH_CLIENT_ID = None

    response = owner.get("/dashboard/integrations/google", follow=True)

    assert "not configured" in page_text(response)


def test_api_key_shown_once_then_revoked(owner, form):
    created = owner.post(
        "/dashboard/settings/api-keys/new", {"name": "Sync", "forms": [str(form.pk)]}
    )
    key = ApiKey.objects.get()
    assert created.status_code == 302
    plain = page_text(owner.get(created["Location"])).split('id="new-key">')[1].split("<")[0]

    assert plain.startswith(key.prefix)
    assert plain not in page_text(owner.get("/dashboard/settings/api-keys"))
    owner.post(f"/dashboard/settings/api-keys/{key.pk}/revoke")
    key.refresh_from_db()
    assert key.revoked_at is not None


def test_api_key_needs_a_name_and_a_form(owner, form):
    response = owner.post("/dashboard/settings/api-keys/new", {"name": "Sync"})

    assert response.status_code == 400
    assert not ApiKey.objects.exists()


def test_the_spam_folder_shows_why_and_rescues(owner, form, public):
    form.blocked_words = ["casino"]
    form.save()
    submit(public, form, {"name": "Bot", "message": "casino night"})
    held = Submission.objects.get()

    page = page_text(owner.get(f"/dashboard/forms/{form.pk}/spam"))
    assert 'Spam <span class="count">1</span>' in page
    assert 'Inbox <span class="count">0</span>' in page
    assert "blocked_word: contains the blocked word &quot;casino&quot;" in page
    assert "Not spam" in page

    response = owner.post(f"/dashboard/forms/{form.pk}/submissions/{held.pk}/mark",
                          {"mark": "not-spam", "folder": "spam"})

    assert response.status_code == 302
    held.refresh_from_db()
    assert held.status == "inbox"
    inbox = page_text(owner.get(f"/dashboard/forms/{form.pk}"))
    assert 'Inbox <span class="count">1</span>' in inbox and "casino night" in inbox


def test_the_spam_button_moves_a_submission_to_the_folder(owner, form, public):
    submit(public, form, {"name": "Ada"})
    submission = Submission.objects.get()

    owner.post(f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/mark", {"mark": "spam"})

    submission.refresh_from_db()
    assert submission.status == "spam"


def test_spam_settings_are_saved(owner, form):
    owner.post(f"/dashboard/forms/{form.pk}/settings", {
        "name": "Contact", "rateLimit": "10", "blockedWords": "casino\n  cheap pills \n"})
    form.refresh_from_db()

    assert form.blocked_words == ["casino", "cheap pills"]
    assert form.spam_filter is False  # the box was not ticked
    owner.post(f"/dashboard/forms/{form.pk}/settings",
               {"name": "Contact", "rateLimit": "10", "spamFilter": "on"})
    form.refresh_from_db()
    assert form.spam_filter is True


def test_the_settings_form_shows_the_current_values(owner, form):
    from forms_app.services import form_update

    form_update(form=form, allowed_origins=["https://a.example", "https://b.example"],
                blocked_words=["casino"], retention_days=30, captcha_provider="hcaptcha")

    html = owner.get(f"/dashboard/forms/{form.pk}/settings").content.decode()

    assert ">\nhttps://a.example\nhttps://b.example</textarea>" in html
    assert ">\ncasino</textarea>" in html
    assert 'name="retentionDays" value="30"' in html
    assert '<option value="hcaptcha" selected>' in html
    assert 'id="clearRecaptcha"' not in html  # no CAPTCHA secret to clear


def test_a_rate_limit_that_is_not_a_number_is_refused(owner, form):
    response = owner.post(f"/dashboard/forms/{form.pk}/settings",
                          {"name": "Renamed", "rateLimit": "ten"}, follow=True)

    assert "Settings not saved" in page_text(response)
    form.refresh_from_db()
    assert (form.name, form.rate_limit) == ("Contact", 10)


@pytest.mark.parametrize("name", ["", "   ", "x" * 201])
def test_a_form_needs_a_name_the_form_can_hold(owner, name):
    response = owner.post("/dashboard/forms", {"name": name})

    assert response["Location"] == "/dashboard/"
    assert not Form.objects.exists()


def test_an_api_key_for_another_owners_form_is_refused(owner, form, db):
    from forms_app.services import form_create

    theirs = form_create(owner=make_user("them@example.com"), name="Theirs")

    response = owner.post("/dashboard/settings/api-keys/new",
                          {"name": "Sync", "forms": [str(form.pk), str(theirs.pk)]})

    assert response.status_code == 400
    assert not ApiKey.objects.exists()
    assert 'value="Sync"' in page_text(response)  # what was typed is kept


@pytest.mark.parametrize("fields", [{}, {"mark": "delete"}, {"mark": "spam", "folder": "x"}])
def test_a_mark_that_is_not_spam_or_not_spam_changes_nothing(owner, form, public, fields):
    submit(public, form, {"name": "Ada"})
    submission = Submission.objects.get()

    response = owner.post(f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/mark",
                          fields)

    assert response.status_code == 302
    submission.refresh_from_db()
    assert submission.status == "inbox"


def test_a_delete_with_an_odd_page_goes_back_to_the_first(owner, form, public):
    submit(public, form, {"name": "Ada"})
    submission = Submission.objects.get()

    response = owner.post(f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/delete",
                          {"page": "-3"})

    assert response["Location"] == f"/dashboard/forms/{form.pk}"
    assert not Submission.objects.exists()


@pytest.mark.parametrize("fields", [
    {"type": "WEBHOOK", "url": "https://hooks.example.com/" + "x" * 2000},
    {"type": "SLACK", "webhookUrl": "https://hooks.slack.com/" + "x" * 2000},
    {"type": "EMAIL", "apiKey": "re_1", "fromEmail": "f@example.com", "toEmail": "t@example.com",
     "subject": "s" * 201},
    {"type": "EMAIL", "apiKey": "re_1", "fromEmail": "f@example.com", "toEmail": "t@example.com",
     "autoresponseText": "a\x00b"},
])
def test_a_card_past_its_fields_bounds_creates_nothing(owner, fields):
    response = owner.post("/dashboard/integrations/new", fields)

    assert response.status_code == 400
    assert "Integration not created" in page_text(response)
    assert not Integration.objects.exists()


def test_a_cards_values_are_trimmed_as_the_api_would_take_them(owner):
    owner.post("/dashboard/integrations/new",
               {"type": "WEBHOOK", "url": "  https://hooks.example.com/x  "})

    assert Integration.objects.get().config["url"] == "https://hooks.example.com/x"
