"""Team forms in the dashboard: listed with the team and the caller's role, each page and
write held to the role it needs (forms_app/access.py), and only the buttons the role allows."""

from __future__ import annotations

import pytest

from forms_app.models import Form
from forms_app.services import form_create
from integrations.models import Integration
from integrations.services import integration_create
from submissions.models import Submission
from teams.services import team_create
from tests.conftest import add_submission

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return response.content.decode()


def test_the_forms_list_shows_team_forms_with_the_team_and_role(team_crew, team_form):
    form_create(owner=team_crew.users["viewer"], name="My own survey")

    page = team_crew.browser("viewer").get("/dashboard/")

    html = text(page)
    assert page.status_code == 200
    assert "Agency contact" in html and "My own survey" in html
    assert '<td data-label="Team">Agency</td>' in html
    assert '<td data-label="Your role">viewer</td>' in html
    assert '<td data-label="Your role">owner</td>' in html


def test_the_team_switcher_narrows_the_list(team_crew, team_form):
    form_create(owner=team_crew.users["viewer"], name="My own survey")
    browser = team_crew.browser("viewer")

    team_only = text(browser.get(f"/dashboard/?team={team_crew.team.pk}"))
    personal = text(browser.get("/dashboard/?team=personal"))

    assert "Agency contact" in team_only and "My own survey" not in team_only
    assert "My own survey" in personal and "Agency contact" not in personal
    assert f'<option value="{team_crew.team.pk}" selected>Team Agency</option>' in team_only


def test_another_teams_forms_are_not_listed(team_crew, team_form):
    other = team_create(owner=team_crew.users["outsider"], name="Elsewhere")
    form_create(owner=team_crew.users["outsider"], name="Their form", team=other)

    html = text(team_crew.browser("viewer").get("/dashboard/"))

    assert "Their form" not in html and "Elsewhere" not in html


@pytest.mark.parametrize("section", ["", "/spam", "/setup", "/integrations", "/settings"])
def test_a_viewer_reads_every_section(team_crew, team_form, section):
    response = team_crew.browser("viewer").get(f"/dashboard/forms/{team_form.pk}{section}")

    assert response.status_code == 200


@pytest.mark.parametrize("section", ["", "/setup", "/settings", "/export"])
def test_an_outsider_gets_404(team_crew, team_form, section):
    browser = team_crew.browser("outsider")

    assert browser.get(f"/dashboard/forms/{team_form.pk}{section}").status_code == 404
    assert browser.post(f"/dashboard/forms/{team_form.pk}/delete").status_code == 404


def test_a_viewer_sees_no_save_or_delete_and_a_post_is_403(team_crew, team_form):
    browser = team_crew.browser("viewer")

    page = text(browser.get(f"/dashboard/forms/{team_form.pk}/settings"))
    saved = browser.post(f"/dashboard/forms/{team_form.pk}/settings", {"name": "Renamed"})

    assert "Save settings" not in page and "Delete this form" not in page
    assert "an editor changes its settings" in page
    assert saved.status_code == 403
    assert "Your role does not allow this" in text(saved)
    assert Form.objects.get(pk=team_form.pk).name == "Agency contact"


def test_an_editor_saves_settings_but_sees_no_delete_and_cannot_delete(team_crew, team_form):
    browser = team_crew.browser("editor")

    page = text(browser.get(f"/dashboard/forms/{team_form.pk}/settings"))
    saved = browser.post(f"/dashboard/forms/{team_form.pk}/settings",
                         {"name": "Renamed", "rateLimit": "10"})
    deleted = browser.post(f"/dashboard/forms/{team_form.pk}/delete")

    assert "Save settings" in page and "Delete this form" not in page
    assert saved.status_code == 302
    assert Form.objects.get(pk=team_form.pk).name == "Renamed"
    assert deleted.status_code == 403
    assert Form.objects.filter(pk=team_form.pk).exists()


def test_an_admin_sees_delete_and_deletes(team_crew, team_form):
    browser = team_crew.browser("admin")

    assert "Delete this form" in text(browser.get(f"/dashboard/forms/{team_form.pk}/settings"))
    assert browser.post(f"/dashboard/forms/{team_form.pk}/delete").status_code == 302
    assert not Form.objects.filter(pk=team_form.pk).exists()


def test_a_viewer_cannot_mark_or_delete_submissions_and_sees_no_such_button(team_crew,
                                                                            team_form):
    submission = add_submission(team_form, {"email": "ada@example.com"})
    browser = team_crew.browser("viewer")
    base = f"/dashboard/forms/{team_form.pk}"

    inbox = text(browser.get(base))
    detail = text(browser.get(f"{base}/submissions/{submission.pk}"))
    marked = browser.post(f"{base}/submissions/{submission.pk}/mark", {"mark": "spam"})
    removed = browser.post(f"{base}/submissions/{submission.pk}/delete")
    bulk = browser.post(f"{base}/submissions/bulk", {"action": "delete", "ids": [submission.pk]})

    assert 'value="delete"' not in inbox and 'value="spam"' not in inbox
    assert 'value="export"' in inbox
    assert "Mark as spam" not in detail
    assert marked.status_code == removed.status_code == bulk.status_code == 403
    assert Submission.objects.get(pk=submission.pk).status == "inbox"


def test_a_viewer_exports_the_chosen(team_crew, team_form):
    submission = add_submission(team_form, {"email": "ada@example.com"})
    browser = team_crew.browser("viewer")

    chosen = browser.post(f"/dashboard/forms/{team_form.pk}/submissions/bulk",
                          {"action": "export", "ids": [submission.pk]})

    assert chosen.status_code == 302
    assert "/export?" in chosen["Location"]
    assert browser.get(chosen["Location"]).status_code == 200


def test_an_editor_marks_spam(team_crew, team_form):
    submission = add_submission(team_form, {"email": "ada@example.com"})
    browser = team_crew.browser("editor")

    marked = browser.post(f"/dashboard/forms/{team_form.pk}/submissions/{submission.pk}/mark",
                          {"mark": "spam"})

    assert marked.status_code == 302
    assert Submission.objects.get(pk=submission.pk).status == "spam"


def test_a_team_forms_health_counts_every_members_integration_and_no_ones_account_wide(
        team_crew, team_form):
    """Every member sees the same health on a team form: the admin's failing webhook on it
    counts for the viewer; the viewer's own account-wide one, which a team form never
    receives, does not."""
    failing = integration_create(owner=team_crew.users["admin"], type="WEBHOOK",
                                 config={"url": "https://hooks.example.com/a"},
                                 form_id=str(team_form.pk))
    integration_create(owner=team_crew.users["viewer"], type="WEBHOOK",
                       config={"url": "https://hooks.example.com/b"})
    Integration.objects.filter(pk=failing.pk).update(status="failing")
    Integration.objects.exclude(pk=failing.pk).update(status="healthy")

    for who in ("viewer", "owner"):
        html = text(team_crew.browser(who).get("/dashboard/"))
        row = html[html.index(">Agency contact</a>"):]
        assert "Failing" in row[:row.index("</tr>")], who

    Integration.objects.filter(pk=failing.pk).delete()
    html = text(team_crew.browser("viewer").get("/dashboard/"))
    row = html[html.index(">Agency contact</a>"):]
    assert "None" in row[:row.index("</tr>")]
