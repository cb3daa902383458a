"""Every signed-in page, at a desktop's width and a phone's, in the owner's time zone: nothing
wider than the screen, every write answered with a redirect, a reload after each write
changes nothing (every write the dashboard makes, one by one, in its own test), times in the
owner's zone, values as the export writes them, and no serious or critical accessibility
problem (axe-core). Screenshots of each page at both widths go to
test-artifacts/screenshots/.

axe-core comes from the npm registry, installed beside the project (.ci/run does this):

    npm install --prefix . --no-save --no-package-lock axe-core@4.14.1

and is read from node_modules/axe-core/axe.min.js, or from the file AXE_CORE names. Without
it a developer's run skips the accessibility check; with CI=true it fails.
"""

from __future__ import annotations

import csv
import io
import os
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyotp
import pytest
from playwright.sync_api import expect

from accounts.models import TwoFactor, User
from forms_app.models import Form
from forms_app.services import form_create
from integrations.kinds.owner_email import digest
from integrations.models import Delivery, DeliveryState, Integration
from integrations.services import integration_create
from pullapi.models import ApiKey
from submissions.export import safe_cell
from submissions.models import Erasure, Submission
from tests.browser.conftest import SCREENSHOTS
from tests.conftest import PASSWORD, CommitClient, add_submission, make_user
from tests.fakes import FakeServer, Reply
from tests.files.helpers import PDF, post, upload

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
AXE = Path(os.environ.get("AXE_CORE") or ROOT / "node_modules" / "axe-core" / "axe.min.js")
ZONE = "Europe/Paris"
WIDTHS = {"desktop": 1280, "phone": 390}
LONG = "A very long message. " * 150  # 3,150 characters
TAGS = ["design", "seo"]
UTM = {"utm_source": "newsletter", "utm_campaign": "autumn"}
FIELDS = ("email", "tags", "utm", "message")  # the first submission's


@pytest.fixture(scope="module")
def axe_source() -> str | None:
    if AXE.exists():
        return AXE.read_text()
    if os.environ.get("CI"):
        pytest.fail(f"axe-core is not installed at {AXE}; CI must run the accessibility check.")
    return None


@pytest.fixture
def owner_data(settings):
    """An owner with a form full of awkward values, a failed webhook delivery and an email
    integration."""
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    settings.EMAIL_PROVIDER_API_URL = "http://127.0.0.1:9"  # nothing listens: no mail leaves
    owner = make_user()
    form = form_create(owner=owner, name="Leads from the autumn campaign landing page")
    hook = integration_create(owner=owner, type="WEBHOOK",
                              config={"url": "https://hooks.example.com/formflow/incoming"})
    integration_create(owner=owner, type="EMAIL", config={
        "apiKey": "re_123456", "fromEmail": "forms@example.com",
        "toEmail": "someone.with.a.long.address@example.com"})
    first = add_submission(form, [["email", "ada@example.com"], ["tags", TAGS], ["utm", UTM],
                                  ["message", LONG]],
                           at=datetime(2026, 11, 24, 21, 46, 31, tzinfo=UTC))
    add_submission(form, {"email": "grace@example.com",
                          "token": "x" * 120, "message": "Hello there"})
    Delivery.objects.filter(integration=hook, submission=first).update(
        state=DeliveryState.FAILED, attempts=8, last_error="Connection failed: NewConnectionError")
    Integration.objects.filter(pk=hook.pk).update(
        status="failing", last_error="Connection failed: NewConnectionError")
    # The owner's notification of the first one waits for the hourly digest.
    Delivery.objects.filter(integration__type="OWNER_EMAIL", submission=first).update(
        state=DeliveryState.PENDING, attempts=1, last_error=digest.HELD_ERROR,
        next_attempt_at=datetime.now(UTC) + timedelta(minutes=50))  # not due while the walk runs
    jobs = form_create(owner=owner, name="Applications", file_uploads={
        "maxBytes": 10_000, "maxFiles": 2, "types": ["application/pdf"]})
    post(CommitClient(), jobs, {"cv": upload("curriculum-vitae-with-a-long-name.pdf", PDF,
                                             "application/pdf")})
    return {"owner": owner, "form": form, "first": first, "jobs": jobs,
            "with_files": Submission.objects.get(form=jobs)}


def state() -> tuple:
    """What a repeated write would change."""
    return (ApiKey.objects.count(), Integration.objects.count(),
            tuple(sorted(Submission.objects.values_list("status", flat=True))),
            tuple(Integration.objects.order_by("pk").values_list("enabled", flat=True)))


class Posts:
    """Every form post the page makes (a navigation), and what answered it."""

    def __init__(self, page) -> None:
        self.answers: list[tuple[str, int]] = []
        page.on("response", self.seen)

    def seen(self, response) -> None:
        request = response.request
        if request.method == "POST" and request.is_navigation_request():
            self.answers.append((request.url, response.status))

    def not_redirected(self) -> list[tuple[str, int]]:
        return [(url, status) for url, status in self.answers if status not in (302, 303)]


def overflow(page) -> dict:
    return page.evaluate("""() => {
        const width = window.innerWidth;
        const past = [...document.querySelectorAll("body *")].filter(e => {
            const box = e.getBoundingClientRect();
            return box.width > 0 && box.height > 0 && box.right > width + 1;
        }).map(e => `${e.tagName.toLowerCase()}.${e.className}`);
        // Text that runs out of its box (a word too long to wrap) is no element of its own.
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        const range = document.createRange();
        while (walker.nextNode()) {
            range.selectNodeContents(walker.currentNode);
            const box = range.getBoundingClientRect();
            if (box.width > 0 && box.right > width + 1) {
                past.push(`text in ${walker.currentNode.parentElement.tagName.toLowerCase()}: `
                          + walker.currentNode.textContent.trim().slice(0, 40));
            }
        }
        return {scroll: document.scrollingElement.scrollWidth, width, past: past.slice(0, 8)};
    }""")


def accessibility_problems(page, axe_source: str | None) -> list:
    if axe_source is None:
        return []
    page.add_script_tag(content=axe_source)
    found = page.evaluate("""async () => (await axe.run(document, {resultTypes: ["violations"]}))
        .violations.filter(v => v.impact === "serious" || v.impact === "critical")
        .map(v => [v.id, v.impact, v.nodes.slice(0, 3).map(n => n.target.join(" "))])""")
    return found


def check_page(page, name: str, width: str, axe_source: str | None) -> None:
    page.wait_for_load_state("load")
    fits = overflow(page)
    assert fits["scroll"] <= fits["width"] and not fits["past"], (name, width, fits)
    assert f"Times are shown in {ZONE}" in page.locator("footer.zone").inner_text(), name
    for stamp in page.locator("main time").all()[:3]:
        assert re.search(r" (CET|CEST)$", stamp.inner_text()), (name, stamp.inner_text())
    assert accessibility_problems(page, axe_source) == [], (name, width)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"every-page-{name}-{width}.png"), full_page=True)


def shown_values(page) -> dict[str, str]:
    """The submission page's fields, each value whole (a long one's text behind its "show
    all" included)."""
    names = page.locator("#fields-heading + dl dt").all_inner_texts()
    values = [cell.locator(".value-text").last.text_content() or ""
              for cell in page.locator("#fields-heading + dl dd").all()]
    return dict(zip(names, values, strict=True))


def exported_values(csv_text: str) -> dict[str, str]:
    """The one row of an export, by column, less the columns that are not the fields."""
    row = next(csv.DictReader(io.StringIO(csv_text)))
    return {name: value for name, value in row.items() if name in FIELDS}


def on_screen(page, locator, width: int) -> None:
    """An action the owner can reach: visible, and inside the viewport's width."""
    expect(locator).to_be_visible()
    box = locator.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, (page.url, box)


def reload_changes_nothing(page) -> None:
    before = state()
    page.reload()
    page.wait_for_load_state("load")
    assert state() == before, page.url


def sign_in_first_time(page, live_server) -> None:
    page.goto("/dashboard/login")
    page.get_by_label("Email").fill("owner@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/dashboard/$"))
    # The first visit stores the browser's zone and draws the page again in it.
    expect(page.locator("footer.zone")).to_contain_text(f"Times are shown in {ZONE}")
    deadline = time.monotonic() + 10
    while User.objects.get(email="owner@example.com").time_zone != ZONE:
        assert time.monotonic() < deadline, "the browser's zone was not stored"
        time.sleep(0.1)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_signed_in_page_at_both_widths(chromium, live_server, owner_data, axe_source,
                                             width):
    form, first = owner_data["form"], owner_data["first"]
    context = chromium.new_context(
        base_url=live_server.url, viewport={"width": WIDTHS[width], "height": 900},
        timezone_id=ZONE, bypass_csp=True, accept_downloads=True)  # CSP: to inject axe
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.on("dialog", lambda dialog: dialog.accept())
    posts = Posts(page)
    try:
        sign_in_first_time(page, live_server)
        check_page(page, "forms", width, axe_source)

        inbox = f"/dashboard/forms/{form.pk}"
        page.goto(inbox)
        check_page(page, "inbox", width, axe_source)
        # Values as the export writes them; the long one cut, the rest behind <details>.
        row = page.locator("tr", has_text="ada@example.com")
        expect(row.locator("dd", has_text=safe_cell(TAGS))).to_have_text(safe_cell(TAGS))
        expect(row.locator("dd", has_text="utm_source")).to_have_text(safe_cell(UTM))
        expect(row.locator("details.value summary")).to_contain_text("show all 3150 characters")
        expect(row.locator("time")).to_have_text("2026-11-24 22:46 CET")
        assert "in Europe/Paris" in page.locator("#days-zone").inner_text()
        page.get_by_label("Search values").fill("grace")
        page.get_by_label("Search values").press("Enter")
        expect(page.locator("#search-status")).to_have_text("1 submission matches.")
        check_page(page, "inbox-search", width, axe_source)

        page.goto(f"{inbox}/submissions/{first.pk}")
        check_page(page, "submission", width, axe_source)
        expect(page.get_by_text("Webhook to hooks.example.com")).to_be_visible()
        expect(page.get_by_text("The destination could not be reached").first).to_be_visible()
        expect(page.get_by_text("held for the hourly digest")).to_be_visible()
        expect(page.get_by_text("The delivery failed.")).to_have_count(0)
        on_screen(page, page.get_by_role("button", name="Mark as spam"), WIDTHS[width])

        jobs, with_files = owner_data["jobs"], owner_data["with_files"]
        page.goto(f"/dashboard/forms/{jobs.pk}/submissions/{with_files.pk}")
        check_page(page, "submission-files", width, axe_source)
        on_screen(page, page.get_by_role(
            "link", name="Download curriculum-vitae-with-a-long-name.pdf"), WIDTHS[width])

        for section in ("spam", "setup", "integrations", "settings"):
            page.goto(f"{inbox}/{section}")
            check_page(page, f"form-{section}", width, axe_source)

        # Settings: a failed save keeps what was typed; a good one redirects.
        page.get_by_label("Allowed origins").fill("not an origin")
        page.get_by_role("button", name="Save settings").click()
        expect(page.get_by_text("Settings not saved. Allowed origins:")).to_be_visible()
        expect(page.get_by_label("Allowed origins")).to_have_value("not an origin")
        assert posts.not_redirected()[-1][1] == 400
        posts.answers.clear()
        page.get_by_label("Allowed origins").fill("https://www.example.com")
        page.get_by_role("button", name="Save settings").click()
        expect(page.get_by_text("Settings saved.")).to_be_visible()
        reload_changes_nothing(page)

        # The inbox's bulk actions: export the chosen, then spam.
        page.goto(inbox)
        page.locator("tr", has_text="ada@example.com").get_by_role("checkbox").check()
        with page.expect_download() as download:
            page.get_by_role("button", name="Export chosen CSV").click()
        exported = download.value.path().read_text(encoding="utf-8")
        assert f'"{safe_cell(TAGS)}"' in exported and "grace@example.com" not in exported
        page.goto(f"{inbox}/submissions/{first.pk}")
        shown = shown_values(page)
        assert list(shown) == list(FIELDS) and shown == exported_values(exported), width
        page.goto(inbox)
        page.get_by_label(re.compile("Choose the submission")).first.check()
        page.get_by_role("button", name="Mark spam").click()
        expect(page.get_by_text("1 submission moved to spam.")).to_be_visible()
        reload_changes_nothing(page)
        check_page(page, "inbox-after-bulk", width, axe_source)
        page.goto(f"{inbox}/spam")
        expect(page.get_by_label(re.compile("Choose the submission"))).to_have_count(1)
        check_page(page, "spam-with-rows", width, axe_source)

        page.goto("/dashboard/integrations")
        check_page(page, "integrations", width, axe_source)
        expect(page.get_by_text("Webhook to hooks.example.com").first).to_be_visible()
        page.get_by_label("HTTPS URL").fill(f"{live_server.url}/hook")
        page.get_by_role("button", name="Add webhook").click()
        expect(page.locator("#new-secret")).to_contain_text("whsec_")
        reload_changes_nothing(page)
        expect(page.locator("#new-secret")).to_have_count(0)

        page.goto("/dashboard/settings/api-keys")
        check_page(page, "api-keys", width, axe_source)
        page.get_by_label("Name", exact=True).fill("Warehouse")
        page.get_by_label(form.name).check()
        page.get_by_role("button", name="Create key").click()
        expect(page.locator("#new-key")).to_contain_text("ff_live_")
        reload_changes_nothing(page)
        assert ApiKey.objects.count() == 1
        check_page(page, "api-keys-after", width, axe_source)

        page.goto("/dashboard/account")
        check_page(page, "account", width, axe_source)
        expect(page.get_by_label("Time zone")).to_have_value(ZONE)

        page.goto("/dashboard/account/audit")
        check_page(page, "audit", width, axe_source)
        log = page.locator("table.audit")
        expect(log.get_by_text("api_key.created").first).to_be_visible()
        page.get_by_label("Action").select_option("form")
        page.get_by_role("button", name="Show").click()
        expect(log.get_by_text("form.created").first).to_be_visible()
        expect(log.get_by_text("api_key.created")).to_have_count(0)
        check_page(page, "audit-filtered", width, axe_source)

        page.goto("/dashboard/account/two-factor")
        check_page(page, "two-factor", width, axe_source)
        page.get_by_role("button", name="Set up two-step sign-in").click()
        page.wait_for_url(re.compile(r"/two-factor/new$"))
        check_page(page, "two-factor-setup", width, axe_source)
        reload_changes_nothing(page)
        secret = page.locator("#totp-secret").inner_text()
        page.get_by_label("Code from your authenticator app").fill(pyotp.TOTP(secret).now())
        page.get_by_role("button", name="Turn on two-step sign-in").click()
        page.wait_for_url(re.compile(r"/two-factor/codes$"))
        expect(page.locator("#recovery-codes code")).to_have_count(10)
        check_page(page, "two-factor-codes", width, axe_source)

        page.goto("/dashboard/account/erasure")
        check_page(page, "erasure", width, axe_source)
        page.get_by_label("Email address").fill("grace@example.com")
        page.get_by_role("button", name="Preview").click()
        expect(page.get_by_text("What would be erased")).to_be_visible()
        check_page(page, "erasure-preview", width, axe_source)
        page.get_by_role("button", name=re.compile(r"^Erase 1 submission")).click()
        expect(page.get_by_text("Erased 1 submission holding")).to_be_visible()
        expect(page.locator("main table")).to_contain_text("Submissions erased")
        check_page(page, "erasure-receipts", width, axe_source)

        assert posts.not_redirected() == []
        assert len(posts.answers) >= 4
    finally:
        context.close()


def world(receiver) -> tuple:
    """Everything a dashboard write changes: a write repeated by a reload would show here."""
    return (
        tuple(Form.objects.order_by("pk").values_list("pk", "name", "field_rules")),
        tuple(ApiKey.objects.order_by("pk").values_list("pk", "revoked_at")),
        tuple(Integration.objects.order_by("pk").values_list("pk", "enabled")),
        tuple(Submission.objects.order_by("pk").values_list("pk", "status")),
        tuple(Delivery.objects.order_by("pk").values_list("pk", "state", "attempts")),
        tuple(User.objects.values_list("password", "time_zone", "token_version")),
        tuple(TwoFactor.objects.values_list("enabled", "recovery_hashes", "last_step")),
        Erasure.objects.count(),
        len(receiver.requests),
    )


def write_then_reload(page, posts: Posts, receiver, act, done) -> None:
    """Do one write through the page and see it land (``done``: a text or a locator); it
    must have changed something and been answered with a redirect. Then reload: the reload
    posts nothing and changes nothing."""
    before = world(receiver)
    posted = len(posts.answers)
    act()
    expect(page.get_by_text(done).first if isinstance(done, str) else done).to_be_visible()
    page.wait_for_load_state("load")
    assert len(posts.answers) > posted and posts.not_redirected() == [], posts.answers
    after = world(receiver)
    assert after != before, f"{done}: the write changed nothing"
    posted = len(posts.answers)
    page.reload()
    page.wait_for_load_state("load")
    assert len(posts.answers) == posted, (page.url, posts.answers[posted:])
    assert world(receiver) == after, page.url


@pytest.fixture
def receiver(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    settings.DELIVERY_RETRY_DELAYS = []
    with FakeServer(lambda _request: Reply(500)) as server:
        yield server


@pytest.mark.parametrize("width", WIDTHS)
def test_a_reload_after_each_dashboard_write_changes_nothing(chromium, live_server, receiver,
                                                             width):
    owner = make_user()
    form = form_create(owner=owner, name="Leads", notify_owner=False)
    integration_create(owner=owner, type="WEBHOOK", config={"url": f"{receiver.url}/hook"})
    submission = add_submission(form, {"email": "ada@example.com", "message": "Hello"})
    assert Delivery.objects.get().state == DeliveryState.FAILED  # no retries left
    receiver.handler = lambda _request: Reply(200)
    context = chromium.new_context(
        base_url=live_server.url, viewport={"width": WIDTHS[width], "height": 900},
        timezone_id=ZONE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.on("dialog", lambda dialog: dialog.accept())
    posts = Posts(page)
    submission_page = f"/dashboard/forms/{form.pk}/submissions/{submission.pk}"
    try:
        sign_in_first_time(page, live_server)

        def write(path: str | None, act, done) -> None:
            if path is not None:
                page.goto(path)
            write_then_reload(page, posts, receiver, act, done)

        def click(name: str | re.Pattern, **kwargs):
            return lambda: page.get_by_role("button", name=name, **kwargs).first.click()

        # A submission: its delivery retried, spam and back, then deleted.
        write(submission_page, click(re.compile("^Retry the delivery")), "will be sent again")
        write(submission_page, click("Mark as spam", exact=True), "Moved to spam.")
        write(submission_page, click("Not spam", exact=True), "Moved to the inbox")
        write(submission_page, click("Delete", exact=True), "Submission deleted.")

        # The integration: a test, off and on, then deleted.
        write("/dashboard/integrations", click(re.compile("^Send test")),
              "Test event delivered.")
        write(None, click("Disable", exact=True), ": disabled.")
        write(None, click("Enable", exact=True), ": enabled.")
        write(None, click("Delete", exact=True), ": deleted.")

        # The form's field rules, from the Setup page's editor.
        def save_fields() -> None:
            page.get_by_label("Field name").first.fill("email")
            page.get_by_label("Type").first.select_option("email")
            page.get_by_label("Required").first.check()
            page.get_by_role("button", name="Save fields").click()

        write(f"/dashboard/forms/{form.pk}/setup", save_fields, "Fields saved.")
        assert Form.objects.get(pk=form.pk).field_rules == [
            {"name": "email", "type": "email", "required": True}]

        # An API key: made and revoked.
        def create_key() -> None:
            page.get_by_label("Name", exact=True).fill("Warehouse")
            page.get_by_label("Leads").check()
            page.get_by_role("button", name="Create key").click()

        write("/dashboard/settings/api-keys", create_key, "created. Copy it now")
        write(None, click("Revoke key Warehouse"), "revoked.")

        # A form: made and deleted.
        def create_form() -> None:
            page.get_by_label("Name").fill("Second form")
            page.get_by_role("button", name="Create form").click()

        write("/dashboard/", create_form, "Form “Second form” created.")
        second = Form.objects.get(name="Second form")
        write(f"/dashboard/forms/{second.pk}/settings",
              click("Delete this form and its submissions"), "and its submissions were deleted.")

        # The account: time zone, password, an erasure, two-step sign-in on and off.
        def save_zone() -> None:
            page.get_by_label("Time zone").select_option("Asia/Tokyo")
            page.get_by_role("button", name="Save time zone").click()

        write("/dashboard/account", save_zone, "Times are now shown in Asia/Tokyo.")

        def change_password() -> None:
            page.get_by_label("Current password").fill(PASSWORD)
            page.get_by_label("New password").fill("a-second-long-password")
            page.get_by_role("button", name="Change password").click()

        write("/dashboard/account", change_password, "Password changed.")

        add_submission(form, {"email": "grace@example.com"})

        def erase() -> None:
            page.get_by_label("Email address").fill("grace@example.com")
            page.get_by_role("button", name="Preview").click()
            page.get_by_role("button", name=re.compile("^Erase 1 submission")).click()

        write("/dashboard/account/erasure", erase, "Erased 1 submission holding")

        write("/dashboard/account/two-factor", click("Set up two-step sign-in"),
              page.locator("#totp-secret"))

        codes: list[str] = []

        def turn_on() -> None:
            secret = page.locator("#totp-secret").inner_text()
            page.get_by_label("Code from your authenticator app").fill(
                pyotp.TOTP(secret).now())
            page.get_by_role("button", name="Turn on two-step sign-in").click()
            page.wait_for_url(re.compile(r"/two-factor/codes$"))
            codes.extend(page.locator("#recovery-codes code").all_inner_texts())

        write(None, turn_on, page.locator("#recovery-codes"))
        assert TwoFactor.objects.get().enabled and len(codes) == 10

        def turn_off(code: str) -> None:
            page.get_by_label("Password").fill("a-second-long-password")
            page.get_by_label("Code from your authenticator app").fill(code)
            page.get_by_role("button", name="Turn off two-step sign-in").click()

        write("/dashboard/account/two-factor", lambda: turn_off(codes[0]),
              "Two-step sign-in is off.")
        assert not TwoFactor.objects.exists()
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_invitation_page_at_both_widths(chromium, live_server, axe_source, width):
    """A team's mailed invitation: signed out it asks to log in and comes back; the page names
    the team and role, its button's post passes the CSRF check and joins; used, it says so."""
    from unittest import mock

    from teams.models import Membership
    from teams.services import invitation_create, team_create

    admin = make_user("admin@example.com")
    team = team_create(owner=admin, name="Agency with a long name for small screens")
    with mock.patch("teams.services.secrets.token_urlsafe", return_value="T" * 43):
        invitation_create(team=team, actor=admin, email="owner@example.com", role="editor")
    make_user(time_zone=ZONE)
    link = "/dashboard/invitations/" + "T" * 43
    context = chromium.new_context(base_url=live_server.url, bypass_csp=True,  # to inject axe
                                   viewport={"width": WIDTHS[width], "height": 900},
                                   timezone_id=ZONE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    posts = Posts(page)
    try:
        page.goto(link)
        page.wait_for_url(re.compile(r"/dashboard/login\?next="))
        page.get_by_label("Email").fill("owner@example.com")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(re.compile(r"/dashboard/invitations/"))
        expect(page.get_by_role("heading", name=re.compile("Join the team"))).to_be_visible()
        check_page(page, "invitation", width, axe_source)
        page.get_by_role("button", name="Accept").click()
        page.wait_for_url(re.compile(r"/dashboard/$"))
        expect(page.get_by_text("You joined the team")).to_be_visible()
        assert Membership.objects.get(team=team, user__email="owner@example.com").role == "editor"
        assert posts.not_redirected() == []
        used = page.goto(link)
        assert used.status == 400 and used.headers["referrer-policy"] == "same-origin"
        check_page(page, "invitation-used", width, axe_source)
    finally:
        context.close()


def signed_in_context(chromium, live_server, width: str, email: str):
    context = chromium.new_context(base_url=live_server.url, bypass_csp=True,  # to inject axe
                                   viewport={"width": WIDTHS[width], "height": 900},
                                   timezone_id=ZONE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto("/dashboard/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/dashboard/$"))
    return context, page


@pytest.mark.parametrize("width", WIDTHS)
def test_the_team_pages_at_both_widths(chromium, live_server, axe_source, width):
    """The Teams page, a team's members page with its invitations, the forms list switched to
    the team, and a team form's settings as a viewer sees them (no save, no delete)."""
    from teams.models import Invitation, Membership
    from teams.roles import Role
    from teams.services import team_create

    owner = make_user(time_zone=ZONE)
    viewer = make_user("viewer.with.a.long.address@example.com", time_zone=ZONE)
    team = team_create(owner=owner, name="Agency with a long name for small screens")
    Membership.objects.create(team=team, user=viewer, role=Role.VIEWER)
    shared = form_create(owner=owner, name="Agency contact", team=team)
    form_create(owner=owner, name="My own form")

    context, page = signed_in_context(chromium, live_server, width, owner.email)
    posts = Posts(page)
    try:
        check_page(page, "forms-with-teams", width, axe_source)
        page.get_by_label("Show").select_option(str(team.pk))
        page.get_by_role("button", name="Show").click()
        expect(page.get_by_role("link", name="My own form")).to_have_count(0)
        expect(page.get_by_role("link", name="Agency contact")).to_be_visible()
        check_page(page, "forms-of-a-team", width, axe_source)

        page.goto("/dashboard/teams")
        check_page(page, "teams", width, axe_source)
        page.get_by_role("link", name=team.name).click()
        check_page(page, "team", width, axe_source)
        page.get_by_label("Email").fill("someone.new@example.com")
        page.get_by_label("Role", exact=True).select_option("editor")
        page.get_by_role("button", name="Send invitation").click()
        expect(page.get_by_text("Invitation emailed to someone.new@example.com")).to_be_visible()
        assert Invitation.objects.get().role == "editor"
        reload_changes_nothing(page)
        check_page(page, "team-with-invitation", width, axe_source)
        assert posts.not_redirected() == []
    finally:
        context.close()

    context, page = signed_in_context(chromium, live_server, width, viewer.email)
    try:
        page.goto(f"/dashboard/forms/{shared.pk}/settings")
        check_page(page, "form-settings-viewer", width, axe_source)
        expect(page.get_by_role("button", name="Save settings")).to_have_count(0)
        expect(page.get_by_role("button", name=re.compile("Delete this form"))).to_have_count(0)
        page.goto(f"/dashboard/teams/{team.pk}")
        check_page(page, "team-viewer", width, axe_source)
        expect(page.get_by_role("button", name="Send invitation")).to_have_count(0)
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_team_settings_and_team_forms_pages_at_both_widths(chromium, live_server,
                                                               axe_source, width):
    """As an owner: the team's settings (renaming, the account of record among two owners,
    deleting), a team form's settings with its move, and the integrations and API keys pages
    offering the team's form by its team's name. As a viewer: the integrations page without
    switches and the form's sections with their inputs disabled."""
    from teams.models import Membership, Team
    from teams.roles import Role
    from teams.services import team_create

    owner = make_user(time_zone=ZONE)
    co_owner = make_user("co.owner.with.a.long.address@example.com", time_zone=ZONE)
    viewer = make_user("viewer@example.com", time_zone=ZONE)
    team = team_create(owner=owner, name="Agency with a long name for small screens")
    Membership.objects.create(team=team, user=co_owner, role=Role.OWNER)
    Membership.objects.create(team=team, user=viewer, role=Role.VIEWER)
    shared = form_create(owner=owner, name="Agency contact", team=team)
    form_create(owner=owner, name="Agency contact")  # the same name, one's own
    integration_create(owner=owner, type="WEBHOOK", form_id=str(shared.pk),
                       config={"url": "https://hooks.example.com/agency"})

    context, page = signed_in_context(chromium, live_server, width, owner.email)
    posts = Posts(page)
    try:
        page.goto(f"/dashboard/teams/{team.pk}")
        check_page(page, "team-settings-owner", width, axe_source)
        page.get_by_label("Team name").fill("Agency renamed")
        page.get_by_role("button", name="Rename the team").click()
        expect(page.get_by_text("The team was renamed.")).to_be_visible()
        assert Team.objects.get(pk=team.pk).name == "Agency renamed"
        on_screen(page, page.get_by_role("button", name="Hand it over"), WIDTHS[width])
        on_screen(page, page.get_by_role("button", name="Delete the team"), WIDTHS[width])

        page.goto(f"/dashboard/forms/{shared.pk}/settings")
        check_page(page, "form-settings-move", width, axe_source)
        on_screen(page, page.get_by_role("button", name="Move form"), WIDTHS[width])

        page.goto("/dashboard/integrations")
        check_page(page, "integrations-with-teams", width, axe_source)
        expect(page.locator("#webhook-form option", has_text="· Team Agency renamed")
               ).to_have_count(1)
        page.goto("/dashboard/settings/api-keys")
        check_page(page, "api-keys-with-teams", width, axe_source)
        expect(page.get_by_label("Agency contact · Team Agency renamed")).to_be_visible()
        assert posts.not_redirected() == []
    finally:
        context.close()

    context, page = signed_in_context(chromium, live_server, width, viewer.email)
    try:
        page.goto("/dashboard/integrations")
        check_page(page, "integrations-viewer", width, axe_source)
        expect(page.get_by_role("button", name=re.compile("Send test"))).to_have_count(0)
        for section in ("settings", "setup"):
            page.goto(f"/dashboard/forms/{shared.pk}/{section}")
            check_page(page, f"form-{section}-viewer-disabled", width, axe_source)
            expect(page.locator("fieldset.whole input:not([type=hidden])").first
                   ).to_be_disabled()
    finally:
        context.close()


def check_signed_out_page(page, name: str, width: str, axe_source: str | None) -> None:
    """check_page for the pages before sign-in, which show no time zone."""
    page.wait_for_load_state("load")
    fits = overflow(page)
    assert fits["scroll"] <= fits["width"] and not fits["past"], (name, width, fits)
    assert accessibility_problems(page, axe_source) == [], (name, width)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"every-page-{name}-{width}.png"), full_page=True)


def mailed_link(address: str) -> str:
    from django.core import mail

    body = next(m.body for m in reversed(mail.outbox) if address in m.to)
    return re.search(r"/dashboard/confirm/[A-Za-z0-9_-]+", body).group(0)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_mailed_links_pages_at_both_widths(chromium, live_server, axe_source, width):
    """The confirm page, its set-a-new-password form and its used-link page, in a real browser:
    the button's post passes the CSRF check with the browser's own Origin."""
    from tests.conftest import CommitClient

    make_user()
    CommitClient().post("/api/auth/forgot-password", {"email": "owner@example.com"},
                        format="json")
    CommitClient().post("/api/auth/signup", {"email": "new@example.com",
                                             "password": "a long passphrase"}, format="json")
    context = chromium.new_context(base_url=live_server.url, bypass_csp=True,  # to inject axe
                                   viewport={"width": WIDTHS[width], "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        reset_link = mailed_link("owner@example.com")
        opened = page.goto(reset_link)
        assert opened.headers["referrer-policy"] == "same-origin"
        check_signed_out_page(page, "confirm-reset", width, axe_source)
        page.get_by_role("button", name="Choose a new password").click()
        expect(page.get_by_label("New password")).to_be_visible()
        check_signed_out_page(page, "confirm-new-password", width, axe_source)
        page.get_by_label("New password").fill("a-brand-new-passphrase")
        page.get_by_role("button", name="Set password").click()
        page.wait_for_url(re.compile(r"/dashboard/login"))
        assert User.objects.get(email="owner@example.com").check_password(
            "a-brand-new-passphrase")

        page.goto(reset_link)
        expect(page.get_by_role("heading", name="This link no longer works")).to_be_visible()
        check_signed_out_page(page, "confirm-used", width, axe_source)

        page.goto(mailed_link("new@example.com"))
        check_signed_out_page(page, "confirm-verify", width, axe_source)
        page.get_by_role("button", name="Verify and sign in").click()
        page.wait_for_url(re.compile(r"/dashboard/$"))
        assert User.objects.get(email="new@example.com").is_verified
    finally:
        context.close()
