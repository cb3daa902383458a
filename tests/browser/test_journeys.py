import re

import pytest
import requests
from playwright.sync_api import expect

from accounts.models import User
from integrations.models import Delivery
from integrations.services import integration_create
from tests.browser.conftest import StaticSite
from tests.conftest import (
    PASSWORD,
    last_code,
    make_user,
    next_code,
    submit,
    turn_on_two_factor,
)
from tests.fakes import FakeServer, Reply

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receiver(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    with FakeServer(lambda _request: Reply(200, {"ok": True})) as server:
        yield server


def sign_up(page, email):
    page.goto("/dashboard/signup")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill("a long passphrase")
    page.get_by_role("button", name="Sign up").click()
    page.wait_for_url(re.compile(r"/dashboard/verify"))
    page.get_by_label("Code").fill(last_code(email))
    page.get_by_role("button", name="Verify").click()
    page.wait_for_url(re.compile(r"/dashboard/$"))


def test_a_new_owners_whole_journey(page, live_server, receiver, shot):
    page.on("dialog", lambda dialog: dialog.accept())
    sign_up(page, "owner@example.com")
    shot(page, "01-forms-empty")

    page.get_by_label("Name").fill("Contact")
    page.get_by_role("button", name="Create form").click()
    page.wait_for_url(re.compile(r"/dashboard/forms/"))
    endpoint = page.locator("#endpoint").inner_text()
    assert endpoint.endswith(page.url.split("/")[-1]) or "/api/v1/f/" in endpoint
    endpoint = endpoint.replace("http://localhost:8000", live_server.url)

    site = StaticSite(
        f"""<!doctype html><html lang="en"><body>
        <form action="{endpoint}" method="post">
          <label>Name <input name="name"></label>
          <label>Message <textarea name="message"></textarea></label>
          <button>Send</button>
        </form></body></html>"""
    )
    try:
        page.goto(site.url)
        page.get_by_label("Name").fill("Ada Lovelace")
        page.get_by_label("Message").fill("=1+1 hello")
        page.get_by_role("button", name="Send").click()
        page.wait_for_url(re.compile(r"/thanks$"))
        expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    finally:
        site.close()

    page.goto("/dashboard/")
    page.get_by_role("link", name="Contact").click()
    assert page.locator("td.fields").first.inner_text().startswith("name\nAda Lovelace")
    shot(page, "02-form-page")
    with page.expect_download() as download:
        page.get_by_role("link", name="Export CSV").click()
    csv_text = download.value.path().read_text()
    assert "Ada Lovelace" in csv_text and "'=1+1 hello" in csv_text

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Integrations").click()
    page.get_by_label("HTTPS URL").fill(f"{receiver.url}/hook")
    page.get_by_role("button", name="Add webhook").click()
    assert page.locator("#new-secret").inner_text().startswith("whsec_")
    shot(page, "03-webhook-secret")
    page.get_by_role("button", name="Send test").click()
    expect(page.get_by_text("Test event delivered.")).to_be_visible()
    assert receiver.requests[-1].json()["type"] == "integration.test"
    expect(page.locator(".badge.healthy")).to_be_visible()
    shot(page, "04-integrations")

    page.get_by_role("link", name="API keys").click()
    page.get_by_label("Name").fill("Warehouse")
    page.get_by_label("Contact").check()
    page.get_by_role("button", name="Create key").click()
    key = page.locator("#new-key").inner_text().strip()
    shot(page, "05-api-key")
    pull = f"{live_server.url}/api/v1/submissions"
    headers = {"Authorization": f"Bearer {key}"}
    slug = endpoint.rsplit("/", 1)[-1]
    pulled = requests.get(pull, params={"formId": slug}, headers=headers, timeout=10)
    assert pulled.status_code == 200
    assert pulled.json()["data"][0]["fields"]["name"] == "Ada Lovelace"

    page.get_by_role("button", name="Revoke key Warehouse").click()
    expect(page.get_by_text("revoked.").first).to_be_visible()
    after = requests.get(pull, params={"formId": slug}, headers=headers, timeout=10)
    assert after.status_code == 401


def a_failed_delivery(receiver, settings) -> Delivery:
    """An owner's form "Leads" with a webhook, and a submission whose one delivery gave up
    (no retries); the receiver answers 200 from then on."""
    from forms_app.services import form_create
    from tests.conftest import CommitClient

    settings.DELIVERY_RETRY_DELAYS = []
    receiver.handler = lambda _r: Reply(500)
    # The webhook's delivery alone: the owner's own notification email is off for this form.
    form = form_create(owner=make_user(), name="Leads", notify_owner=False)
    integration_create(owner=form.owner, type="WEBHOOK", config={"url": receiver.url})
    submit(CommitClient(), form, {"name": "Ada Lovelace", "message": "Hello"})
    delivery = Delivery.objects.get()
    assert delivery.state == "failed"
    receiver.handler = lambda _r: Reply(200)
    return delivery


def test_an_operator_retries_a_failed_delivery_in_the_admin(
    page, live_server, receiver, settings, shot
):
    delivery = a_failed_delivery(receiver, settings)
    operator = User.objects.create_superuser("ops@example.com", "ops-password-123")
    secret, _ = turn_on_two_factor(operator)

    page.goto("/admin/login/")
    page.get_by_label("Email").fill("ops@example.com")
    page.get_by_label("Password").fill("ops-password-123")
    page.get_by_label("Two-step code").fill(next_code(secret))
    page.get_by_role("button", name="Log in").click()
    page.goto("/admin/integrations/delivery/?state__exact=failed")
    page.locator(f'input[name="_selected_action"][value="{delivery.pk}"]').check()
    page.locator('select[name="action"]').select_option("retry_failed")
    page.get_by_role("button", name="Run").or_(page.get_by_role("button", name="Go")).click()
    expect(page.get_by_text("Re-queued 1 failed deliveries.")).to_be_visible()
    shot(page, "06-admin-retry")

    delivery.refresh_from_db()
    assert delivery.state == "delivered"
    assert len(receiver.requests) == 2


def sign_in(page, email="owner@example.com"):
    page.goto("/dashboard/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/dashboard/$"))
    page.wait_for_load_state("networkidle")  # the first visit stores the browser's time zone


def test_an_owner_reads_a_submission_retries_its_delivery_and_sorts_spam(
    page, live_server, receiver, settings, shot
):
    a_failed_delivery(receiver, settings)
    sign_in(page)

    expect(page.locator("svg.sparkline")).to_have_attribute(
        "aria-label", "1 submission in the last 30 days")
    expect(page.locator(".badge.failing")).to_be_visible()
    shot(page, "07-forms-list")
    page.get_by_role("link", name="Leads").click()
    page.locator("td a").first.click()
    expect(page.get_by_role("heading", name="Submission")).to_be_visible()
    expect(page.get_by_text("Ada Lovelace")).to_be_visible()
    expect(page.get_by_role("cell", name="failed")).to_be_visible()
    shot(page, "08-submission-failed-delivery")

    page.get_by_role("button", name="Retry").click()
    expect(page.get_by_text("will be sent again")).to_be_visible()
    assert Delivery.objects.get().state == "delivered"
    page.reload()
    expect(page.get_by_role("cell", name="delivered")).to_be_visible()
    shot(page, "09-submission-delivered")

    page.get_by_role("button", name="Mark as spam").click()
    expect(page.get_by_text("Moved to spam")).to_be_visible()
    page.get_by_role("link", name=re.compile("^Spam")).click()
    page.get_by_label(re.compile("Choose the submission")).check()
    page.get_by_role("button", name="Not spam").click()
    expect(page.get_by_text("1 submission moved to the inbox")).to_be_visible()
    shot(page, "10-rescued")


def test_login_works_with_the_keyboard_alone(page, live_server, db):
    make_user()
    page.goto("/dashboard/login")

    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.locator("#email").focus()
    page.keyboard.type("owner@example.com")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "password"
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")

    page.wait_for_url(re.compile(r"/dashboard/$"))
    expect(page.get_by_role("heading", name="Your forms")).to_be_visible()


def test_pages_fit_a_phone_screen(chromium, live_server, shot):
    owner = make_user()
    from forms_app.services import form_create
    from submissions.models import Submission
    from tests.conftest import CommitClient
    from tests.files.helpers import PDF, post, upload, upload_form

    form = form_create(owner=owner, name="A form with a rather long name")
    submit(CommitClient(), form, {"message": "x" * 300, "email": "someone@example.com"})
    jobs = upload_form(owner)
    post(CommitClient(), jobs, {"cv": upload("curriculum-vitae-of-a-long-name.pdf", PDF,
                                             "application/pdf")})
    with_files = Submission.objects.get(form=jobs)
    context = chromium.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto("/dashboard/login")
    page.get_by_label("Email").fill("owner@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/dashboard/$"))

    for path, name in [
        ("/dashboard/", "phone-forms"),
        (f"/dashboard/forms/{form.pk}", "phone-form-page"),
        ("/dashboard/integrations", "phone-integrations"),
        ("/dashboard/settings/api-keys", "phone-api-keys"),
        ("/dashboard/account/audit", "phone-audit"),
        (f"/dashboard/forms/{jobs.pk}/submissions/{with_files.pk}", "phone-submission-files"),
    ]:
        page.goto(path)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, (path, overflow)
        for table in page.locator("main table").all():  # no table wider than the screen
            assert table.bounding_box()["width"] <= 390, (path, table.bounding_box())
        shot(page, name)
    page.goto("/dashboard/")
    boxes = [item.bounding_box() for item in page.locator("header nav a").all()]
    assert max(b["y"] for b in boxes) < min(b["y"] + b["height"] for b in boxes), boxes  # one row
    log_out = page.get_by_role("button", name="Log out").bounding_box()
    brand = page.get_by_role("link", name="FormFlow").bounding_box()
    assert abs(log_out["y"] + log_out["height"] / 2 - brand["y"] - brand["height"] / 2) < 8
    assert log_out["x"] + log_out["width"] <= 390
    assert page.locator("header").bounding_box()["height"] < 100
    forms_top = page.locator("table.forms").bounding_box()["y"]
    assert forms_top < page.get_by_role("heading", name="New form").bounding_box()["y"]
    page.goto(f"/dashboard/forms/{jobs.pk}/submissions/{with_files.pk}")
    toolbar = page.get_by_role("group", name="Actions on this submission")
    assert toolbar.bounding_box()["y"] < page.locator("#fields-heading").bounding_box()["y"]
    download = page.get_by_role("link", name="Download curriculum-vitae-of-a-long-name.pdf")
    box = download.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box  # reachable, on the screen
    context.close()


def test_every_input_has_a_label(page, live_server, db):
    make_user()
    page.goto("/dashboard/login")
    page.get_by_label("Email").fill("owner@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/dashboard/$"))
    page.wait_for_load_state("networkidle")  # the first visit stores the browser's time zone
    page.get_by_label("Name").fill("Labelled")
    page.get_by_role("button", name="Create form").click()
    page.wait_for_url(re.compile(r"/dashboard/forms/"))
    form_page = page.url

    for path in [
        "/dashboard/",
        form_page,
        "/dashboard/integrations",
        "/dashboard/settings/api-keys",
    ]:
        page.goto(path)
        unlabelled = page.evaluate(
            """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
                 .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label'))
                 .map(el => el.name)"""
        )
        assert unlabelled == [], (path, unlabelled)


# Every control a mouse can use, as the keyboard reaches it: links, buttons, fields.
CONTROLS = ("a[href], button, input:not([type=hidden]), select, textarea, summary, "
            "[tabindex]:not([tabindex='-1'])")
KEYBOARD_PAGES = ["/dashboard/", "/dashboard/forms/{form}", "/dashboard/forms/{form}/submissions/"
                  "{submission}", "/dashboard/integrations", "/dashboard/settings/api-keys",
                  "/dashboard/account"]


def test_every_page_works_from_the_keyboard(page, live_server, receiver, settings):
    """Tab visits every visible control of each page once, the skip link first, and each
    shows where the focus is: nothing needs a mouse."""
    delivery = a_failed_delivery(receiver, settings)
    sign_in(page)
    paths = [path.format(form=delivery.submission.form_id, submission=delivery.submission_id)
             for path in KEYBOARD_PAGES]
    for path in paths:
        page.goto(path)
        # Number the visible controls, so each focus names which one it is.
        controls = page.evaluate(f"""() => {{
            const shown = [...document.querySelectorAll("{CONTROLS}")]
                .filter(e => e.offsetParent !== null && !e.disabled);
            shown.forEach((e, i) => e.dataset.control = i);
            return shown.length;
        }}""")
        reached: list = []
        while len(reached) < controls:
            page.keyboard.press("Tab")
            focused = page.evaluate("""() => {
                const e = document.activeElement, style = getComputedStyle(e);
                return [e.dataset.control, e.outerHTML.slice(0, 80),
                        style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0];
            }""")
            if reached and focused[0] is not None and focused[0] == reached[-1][0]:
                continue  # the next part of the same control: a date's day, month and year
            reached.append(focused)
        assert reached[0][1].startswith('<a class="skip"'), path
        assert sorted(int(n) for n, _, _ in reached if n is not None) == list(range(controls)), (
            path, [html for n, html, _ in reached])
        assert all(ring for _, _, ring in reached), (path, [h for _, h, ring in reached
                                                            if not ring])


def test_an_owner_searches_a_form_and_exports_what_matches(page, live_server, shot):
    from datetime import UTC, datetime

    from forms_app.services import form_create
    from tests.conftest import add_submission

    form = form_create(owner=make_user(), name="Leads")
    # Not the snippet's ada@example.com: the page shows that one in its fetch() example.
    for day, email in [(2, "ada@lovelace.example"), (5, "grace@navy.mil"),
                       (9, "linus@kernel.org")]:
        add_submission(form, {"email": email, "message": "Hello"},
                       at=datetime(2026, 11, day, 12, tzinfo=UTC))
    sign_in(page)
    page.get_by_role("link", name="Leads").click()

    page.get_by_label("Search values").fill("KERNEL")
    page.get_by_label("Search values").press("Enter")
    expect(page.locator("#search-status")).to_have_text("1 submission matches.")
    expect(page.get_by_text("linus@kernel.org")).to_be_visible()
    expect(page.get_by_text("ada@lovelace.example")).to_have_count(0)
    shot(page, "11-search")

    page.get_by_role("link", name="Clear").click()
    page.get_by_label("Search values").fill("hello")
    page.get_by_label("First day", exact=True).fill("2026-11-01")
    page.get_by_label("Last day", exact=True).fill("2026-11-05")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("#search-status")).to_have_text("2 submissions match.")
    with page.expect_download() as download:
        page.get_by_role("link", name="Export matching inbox CSV").click()
    exported = download.value.path().read_text(encoding="utf-8")
    assert "ada@lovelace.example" in exported and "grace@navy.mil" in exported
    assert "linus@kernel.org" not in exported


def test_an_owner_changes_a_forms_settings(page, live_server, shot):
    from forms_app.models import Form
    from forms_app.services import form_create

    form = form_create(owner=make_user(), name="Leads")
    sign_in(page)
    page.get_by_role("link", name="Leads").click()
    page.get_by_role("link", name="Settings").click()

    page.get_by_label("Name", exact=True).fill("Sales leads")
    page.get_by_label("Rate limit (submissions per minute per visitor)").fill("25")
    page.get_by_label("Blocked words", exact=True).fill("casino\ncheap pills")
    page.get_by_label("Keep submissions for (days)").fill("90")
    page.get_by_role("button", name="Save settings").click()

    expect(page.get_by_text("Settings saved.")).to_be_visible()
    shot(page, "12-settings-saved")
    form = Form.objects.get(pk=form.pk)
    assert (form.name, form.rate_limit, form.blocked_words, form.retention_days) == (
        "Sales leads", 25, ["casino", "cheap pills"], 90)

    page.get_by_label("Allowed origins").fill("not an origin")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_text("Settings not saved.")).to_be_visible()
    assert Form.objects.get(pk=form.pk).allowed_origins == []


def test_an_owner_changes_resets_and_uses_a_password(page, live_server, shot):
    make_user()
    sign_in(page)
    page.get_by_role("link", name="Account").click()
    page.get_by_label("Current password").fill(PASSWORD)
    page.get_by_label("New password").fill("a-second-long-password")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_text("Password changed. Every other session was logged out.")
           ).to_be_visible()
    shot(page, "13-password-changed")

    page.get_by_role("button", name="Log out everywhere").click()
    page.wait_for_url(re.compile(r"/dashboard/login"))

    page.get_by_role("link", name="Forgot your password?").click()
    page.get_by_label("Email").fill("owner@example.com")
    page.get_by_role("button", name="Email me a code").click()
    expect(page.get_by_text("we emailed it a 6-digit code")).to_be_visible()
    page.get_by_label("Code").fill(last_code("owner@example.com"))
    page.get_by_label("New password").fill("a-third-long-password")
    page.get_by_role("button", name="Set password").click()
    expect(page.get_by_text("Your password was changed. Log in with the new one.")
           ).to_be_visible()
    shot(page, "14-password-reset")

    page.get_by_label("Email").fill("owner@example.com")
    page.get_by_label("Password").fill("a-third-long-password")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/dashboard/$"))
    expect(page.get_by_role("heading", name="Your forms")).to_be_visible()


def test_an_owner_turns_on_two_step_sign_in_and_signs_in_with_codes(page, live_server, shot):
    import pyotp

    make_user()
    sign_in(page)
    page.get_by_role("link", name="Account").click()
    page.get_by_role("link", name="Two-step sign-in settings").click()
    page.get_by_role("button", name="Set up two-step sign-in").click()
    expect(page.locator(".qr svg")).to_be_visible()  # drawn on the page, no outside service
    secret = page.locator("#totp-secret").inner_text()
    shot(page, "15-two-step-setup")
    page.get_by_label("Code from your authenticator app").fill(pyotp.TOTP(secret).now())
    page.get_by_role("button", name="Turn on two-step sign-in").click()
    codes = page.locator("#recovery-codes code").all_inner_texts()
    assert len(codes) == 10
    shot(page, "16-recovery-codes")

    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(re.compile(r"/dashboard/login"))
    page.get_by_label("Email").fill("owner@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    # The code is a step of its own, after the password, with nothing typed lost.
    expect(page.get_by_role("heading", name="Two-step sign-in")).to_be_visible()
    expect(page.get_by_label("Password")).to_have_count(0)
    shot(page, "17-two-step-sign-in")
    page.get_by_label("Code from your authenticator app").fill("000000")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("The two-step code is wrong")).to_be_visible()
    page.get_by_label("Code from your authenticator app").fill(next_code(secret))
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/dashboard/$"))

    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(re.compile(r"/dashboard/login"))
    page.get_by_label("Email").fill("owner@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_label("Code from your authenticator app").fill(codes[0])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/dashboard/$"))
    expect(page.get_by_role("heading", name="Your forms")).to_be_visible()


def test_back_after_a_failed_sign_in_asks_for_the_page_not_the_post_again(page, live_server, db):
    """A refused sign-in's page stands in the history as the page's own address: a reload
    or Back asks for it with a GET, never offering to send the password again."""
    make_user(time_zone="UTC")  # no first-visit zone post racing the Back below
    navigations = []
    page.on("request", lambda request: navigations.append(request.method)
            if request.is_navigation_request() and "/dashboard/login" in request.url else None)
    page.goto("/dashboard/login")
    page.get_by_label("Email").fill("owner@example.com")
    page.get_by_label("Password").fill("a wrong password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text("The email or password is incorrect.")).to_be_visible()
    navigations.clear()

    page.reload()
    page.get_by_label("Email").fill("owner@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/dashboard/$"))
    page.wait_for_load_state("load")
    page.go_back()

    assert navigations[0] == "GET"  # the reload
    assert navigations.count("POST") == 1  # the sign-in; Back sent nothing again
