"""The account-wide integrations page with teams: it offers every form the caller may add an
integration to (editor or more), each with its team named; it lists what the integrations
API lists to the caller, with the switches only where their role on the form allows; and a
create, a switch or a Google Sheets connection on a form answers as the API does."""

from __future__ import annotations

import pytest

from audit.models import Entry
from forms_app.services import form_create
from integrations.models import Integration
from integrations.services import integration_create
from teams.services import team_create

pytestmark = pytest.mark.django_db

PAGE = "/dashboard/integrations"
TEAM_OPTION = '<option value="{}">Agency contact · Team Agency</option>'


@pytest.fixture
def admins_hook(team_crew, team_form) -> Integration:
    """A webhook the admin added on the team form."""
    return integration_create(owner=team_crew.users["admin"], type="WEBHOOK",
                              config={"url": "https://hooks.example.com/agency"},
                              form_id=str(team_form.pk))


def text(response) -> str:
    return response.content.decode().replace("<wbr>", "")


def webhook(form_id: str) -> dict[str, str]:
    return {"type": "WEBHOOK", "url": "https://hooks.example.com/new", "formId": form_id}


# --- The forms offered ---------------------------------------------------------------------


@pytest.mark.parametrize("who", ["editor", "admin", "owner"])
def test_an_editor_or_more_is_offered_the_team_form_with_its_team(team_crew, team_form, who):
    page = text(team_crew.browser(who).get(PAGE))

    assert TEAM_OPTION.format(team_form.pk) in page


@pytest.mark.parametrize("who", ["viewer", "outsider"])
def test_a_viewer_or_outsider_is_not_offered_the_team_form(team_crew, team_form, who):
    page = text(team_crew.browser(who).get(PAGE))

    assert str(team_form.pk) not in page


def test_two_forms_of_one_name_are_told_apart(team_crew, team_form):
    own = form_create(owner=team_crew.users["editor"], name="Agency contact")

    page = text(team_crew.browser("editor").get(PAGE))

    assert f'<option value="{own.pk}">Agency contact · Personal</option>' in page
    assert TEAM_OPTION.format(team_form.pk) in page


# --- What is listed, and the switches --------------------------------------------------------


@pytest.mark.parametrize("who", ["viewer", "editor", "admin", "owner"])
def test_every_member_sees_a_team_forms_integration_and_never_its_secret(team_crew,
                                                                         admins_hook, who):
    page = text(team_crew.browser(who).get(PAGE))

    assert f'id="integration-{admins_hook.pk}"' in page
    assert "hooks.example.com/agency" in page
    assert "Agency contact · Team Agency</td>" in page
    assert admins_hook.secrets["signingSecret"] not in page


def test_an_outsider_does_not_see_it(team_crew, admins_hook):
    page = text(team_crew.browser("outsider").get(PAGE))

    assert f'id="integration-{admins_hook.pk}"' not in page


def test_a_viewer_sees_the_row_without_a_switch(team_crew, admins_hook):
    page = text(team_crew.browser("viewer").get(PAGE))

    assert f"/dashboard/integrations/{admins_hook.pk}/" not in page
    assert "An editor of the form manages it" in page


@pytest.mark.parametrize("who", ["editor", "admin", "owner"])
def test_an_editor_or_more_sees_the_switches(team_crew, admins_hook, who):
    page = text(team_crew.browser(who).get(PAGE))

    for action in ("test", "toggle", "delete"):
        assert f'action="/dashboard/integrations/{admins_hook.pk}/{action}"' in page


@pytest.mark.parametrize("action", ["toggle", "delete", "test", "retry"])
def test_a_viewers_switch_is_403_and_changes_nothing(team_crew, admins_hook, action):
    answer = team_crew.browser("viewer").post(f"{PAGE}/{admins_hook.pk}/{action}")

    assert answer.status_code == 403
    assert Integration.objects.get(pk=admins_hook.pk).enabled
    assert not Entry.objects.filter(actor=team_crew.users["viewer"]).exists()


@pytest.mark.parametrize("action", ["toggle", "delete"])
def test_an_outsiders_switch_is_404(team_crew, admins_hook, action):
    answer = team_crew.browser("outsider").post(f"{PAGE}/{admins_hook.pk}/{action}")

    assert answer.status_code == 404
    assert Integration.objects.get(pk=admins_hook.pk).enabled


def test_an_editor_turns_off_another_members_integration(team_crew, admins_hook):
    answer = team_crew.browser("editor").post(f"{PAGE}/{admins_hook.pk}/toggle")

    assert answer.status_code == 302
    assert not Integration.objects.get(pk=admins_hook.pk).enabled
    entry = Entry.objects.get(action="integration.changed")
    assert entry.actor == team_crew.users["editor"] and entry.team_id == team_crew.team.pk


def test_an_editor_deletes_another_members_integration(team_crew, admins_hook):
    answer = team_crew.browser("editor").post(f"{PAGE}/{admins_hook.pk}/delete")

    assert answer.status_code == 302
    assert not Integration.objects.filter(pk=admins_hook.pk).exists()
    assert Entry.objects.get(action="integration.deleted").actor == team_crew.users["editor"]


# --- Creating one on a team form -----------------------------------------------------------


@pytest.mark.parametrize("who", ["editor", "admin", "owner"])
def test_an_editor_or_more_adds_one_to_the_team_form(team_crew, team_form, who):
    answer = team_crew.browser(who).post(f"{PAGE}/new", webhook(str(team_form.pk)))

    assert answer.status_code == 302
    made = Integration.objects.get(form=team_form, type="WEBHOOK")
    assert made.owner == team_crew.users[who]
    entry = Entry.objects.get(action="integration.created")
    assert entry.actor == team_crew.users[who] and entry.team_id == team_crew.team.pk


def test_a_viewers_create_is_403_and_makes_nothing(team_crew, team_form):
    answer = team_crew.browser("viewer").post(f"{PAGE}/new", webhook(str(team_form.pk)))

    assert answer.status_code == 403
    assert "This needs the editor role" in text(answer)
    assert not Integration.objects.filter(type="WEBHOOK").exists()
    assert not Entry.objects.filter(action="integration.created").exists()


def test_an_outsider_is_told_no_more_than_of_a_form_that_does_not_exist(team_crew, team_form):
    browser = team_crew.browser("outsider")
    other = team_create(owner=team_crew.users["outsider"], name="Elsewhere")
    missing = str(other.pk)  # an id, but no form's

    theirs = browser.post(f"{PAGE}/new", webhook(str(team_form.pk)))
    nothing = browser.post(f"{PAGE}/new", webhook(missing))

    assert theirs.status_code == nothing.status_code == 400
    assert f"No form of yours is named &#x27;{team_form.pk}&#x27;" in text(theirs)
    assert "Agency contact" not in text(theirs)
    assert not Integration.objects.filter(type="WEBHOOK").exists()


# --- Connecting Google Sheets ----------------------------------------------------------------


@pytest.fixture
def google_configured(settings):
    settings.GOOGLE_OAUTH_CLIENT_ID = "client-123"
    settings.GOOGLE_OAUTH_CLIENT_SECRET = "client-secret"


def test_an_editor_connects_sheets_for_the_team_form(team_crew, team_form, google_configured):
    answer = team_crew.browser("editor").get(f"{PAGE}/google", {"formId": str(team_form.pk)})

    assert answer.status_code == 302
    assert answer["Location"] == f"/api/auth/google/login?formId={team_form.pk}"


@pytest.mark.parametrize("who", ["viewer", "outsider"])
def test_sheets_for_a_form_one_does_not_edit_is_refused_on_the_page(team_crew, team_form,
                                                                    google_configured, who):
    answer = team_crew.browser(who).get(f"{PAGE}/google", {"formId": str(team_form.pk)})

    assert answer.status_code == 404
    assert "No form of yours has that id." in text(answer)


def test_a_form_id_with_more_in_it_is_one_unknown_id(team_crew, team_form, google_configured):
    team_form.slug = "agency-contact"
    team_form.save()

    answer = team_crew.browser("editor").get(f"{PAGE}/google",
                                             {"formId": "agency-contact&formId=x"})

    assert answer.status_code == 404  # the whole value is one id, which names no form


# --- A team form's own Integrations section --------------------------------------------------


@pytest.mark.parametrize("who", ["viewer", "editor", "admin", "owner"])
def test_every_member_sees_what_receives_the_team_forms_submissions(team_crew, team_form,
                                                                    admins_hook, who):
    """Whoever made them: the admin's webhook, and the notification email of the member
    who turned it on; the account-wide integrations of a member receive no team form."""
    team_crew.api("editor").patch(f"/api/v1/forms/{team_form.pk}/me", {"notify": True},
                                  format="json")
    integration_create(owner=team_crew.users[who], type="WEBHOOK",
                       config={"url": "https://everything.example.com/x"})

    page = text(team_crew.browser(who).get(f"/dashboard/forms/{team_form.pk}/integrations"))

    assert "Webhook to hooks.example.com" in page
    assert "editor@team.example" in page
    assert "everything.example.com" not in page


def test_ones_own_forms_section_lists_ones_account_wide_integrations(team_crew):
    own = form_create(owner=team_crew.users["viewer"], name="My own survey")
    integration_create(owner=team_crew.users["viewer"], type="WEBHOOK",
                       config={"url": "https://everything.example.com/x"})

    page = text(team_crew.browser("viewer").get(f"/dashboard/forms/{own.pk}/integrations"))

    assert "everything.example.com" in page and "(every form)" in page
