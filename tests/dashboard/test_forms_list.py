"""The forms list: each form's last 30 days as a server-drawn chart, its newest submission,
its spam count and its integrations' health, read in a fixed number of statements."""

import re
from datetime import UTC, datetime, timedelta

from forms_app.services import form_create, form_update
from integrations.models import Integration
from integrations.services import integration_create
from submissions.models import Submission
from tests.conftest import add_submission

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


def row_of(html: str, name: str) -> str:
    start = html.index(f">{name}</a>")
    return html[start:html.index("</tr>", start)]


def test_a_bar_a_day_for_the_inbox_of_the_last_30_days(owner, form, clock):
    clock.current = NOW
    for at in [NOW, NOW, NOW - timedelta(days=2), NOW - timedelta(days=29, hours=11)]:
        add_submission(form, {"msg": "hi"}, at=at)
    add_submission(form, {"msg": "old"}, at=NOW - timedelta(days=30, hours=1))  # before
    held = add_submission(form, {"msg": "spam"}, at=NOW)
    Submission.objects.filter(pk=held.pk).update(status="spam")

    row = row_of(owner.get("/dashboard/").content.decode(), "Contact")

    assert 'aria-label="4 submissions in the last 30 days"' in row
    assert len(re.findall(r"<rect ", row)) == 30
    assert "<title>2026-11-24: 2</title>" in row
    assert "<title>2026-11-22: 1</title>" in row
    assert "<title>2026-10-26: 1</title>" in row
    assert "<title>2026-11-23: 0</title>" in row
    heights = [float(h) for h in re.findall(r'height="([\d.]+)"><title>', row)]
    assert max(heights) == 28 and min(heights) == 1  # scaled to the busiest day


def test_the_newest_submission_and_the_spam_count(owner, form, clock):
    clock.current = NOW
    add_submission(form, {"msg": "a"}, at=NOW - timedelta(days=40))
    newest = add_submission(form, {"msg": "b"}, at=NOW - timedelta(days=35, minutes=5))
    held = add_submission(form, {"msg": "spam"}, at=NOW)
    Submission.objects.filter(pk=held.pk).update(status="spam")
    form_create(owner=form.owner, name="Quiet")

    html = owner.get("/dashboard/").content.decode()

    assert newest.submitted_at.strftime("%Y-%m-%d %H:%M") in row_of(html, "Contact")
    assert 'aria-label="0 submissions in the last 30 days"' in row_of(html, "Contact")
    assert "never" in row_of(html, "Quiet")


def test_integration_health_is_the_worst_of_those_that_receive_the_form(owner, form, user):
    form_create(owner=user, name="Quiet", notify_owner=False)
    other = form_create(owner=user, name="Other", notify_owner=False)
    everywhere = integration_create(owner=user, type="WEBHOOK",
                                    config={"url": "https://hooks.example.com/a"})
    own = integration_create(owner=user, type="WEBHOOK",
                             config={"url": "https://hooks.example.com/b"}, form_id=str(other.pk))
    off = integration_create(owner=user, type="WEBHOOK",
                             config={"url": "https://hooks.example.com/c"}, form_id=str(form.pk))
    Integration.objects.filter(pk=everywhere.pk).update(status="healthy")
    Integration.objects.filter(pk=own.pk).update(status="failing")
    Integration.objects.filter(pk=off.pk).update(status="failing", enabled=False)

    html = owner.get("/dashboard/").content.decode()

    assert "Healthy" in row_of(html, "Contact")  # the disabled failing one is not counted
    assert "Failing" in row_of(html, "Other")
    assert "Healthy" in row_of(html, "Quiet")
    Integration.objects.filter(pk=everywhere.pk).update(enabled=False)
    assert "None" in row_of(owner.get("/dashboard/").content.decode(), "Quiet")


def test_the_owners_notification_email_counts_among_the_integrations(owner, form, user):
    """It is in the ledger; Home and the form's Integrations page name it too."""
    form_update(form=form, notify_owner=True)
    quiet = form_create(owner=user, name="Quiet", notify_owner=False)
    Integration.objects.filter(form=form, type="OWNER_EMAIL").update(status="healthy")

    home = owner.get("/dashboard/").content.decode()
    tab = owner.get(f"/dashboard/forms/{form.pk}/integrations").content.decode()
    quiet_tab = owner.get(f"/dashboard/forms/{quiet.pk}/integrations").content.decode()

    assert "Healthy" in row_of(home, "Contact")
    assert "None" in row_of(home, "Quiet")
    assert "Email to you" in tab and user.email in tab
    assert "Email to you" not in quiet_tab
    assert "Nothing receives this form's submissions yet." in quiet_tab


def test_the_list_costs_the_same_statements_for_one_form_or_twenty(
    owner, form, user, django_assert_max_num_queries
):
    add_submission(form, {"msg": "hi"})
    with django_assert_max_num_queries(12) as one:
        owner.get("/dashboard/")
    for n in range(19):
        add_submission(form_create(owner=user, name=f"Form {n}"), {"msg": "hi"})

    with django_assert_max_num_queries(len(one.captured_queries)):
        response = owner.get("/dashboard/")

    assert response.content.decode().count('class="sparkline"') == 20
