"""A team form's pages by role: below editor, every section that has inputs shows them
disabled (the whole fieldset), so the page does not offer what the server refuses."""

from __future__ import annotations

import pytest

from audit.models import Entry
from forms_app.models import Form
from forms_app.services import form_create

pytestmark = pytest.mark.django_db

WHOLE_DISABLED = '<fieldset class="whole" disabled>'
WHOLE_ENABLED = '<fieldset class="whole">'


def text(response) -> str:
    return response.content.decode()


@pytest.mark.parametrize("section", ["settings", "setup"])
def test_a_viewer_sees_every_input_disabled(team_crew, team_form, section):
    page = text(team_crew.browser("viewer").get(f"/dashboard/forms/{team_form.pk}/{section}"))

    assert WHOLE_DISABLED in page and WHOLE_ENABLED not in page


@pytest.mark.parametrize("who", ["editor", "admin", "owner"])
@pytest.mark.parametrize("section", ["settings", "setup"])
def test_an_editor_or_more_sees_the_inputs_enabled(team_crew, team_form, section, who):
    page = text(team_crew.browser(who).get(f"/dashboard/forms/{team_form.pk}/{section}"))

    assert WHOLE_ENABLED in page and WHOLE_DISABLED not in page


def test_ones_own_form_is_enabled(team_crew):
    own = form_create(owner=team_crew.users["viewer"], name="My own survey")

    page = text(team_crew.browser("viewer").get(f"/dashboard/forms/{own.pk}/settings"))

    assert WHOLE_ENABLED in page


def test_a_viewers_field_rules_post_is_refused(team_crew, team_form):
    saved = team_crew.browser("viewer").post(f"/dashboard/forms/{team_form.pk}/setup", {
        "rules-TOTAL_FORMS": "1", "rules-INITIAL_FORMS": "0", "rules-0-name": "email",
        "rules-0-type": "email"})

    assert saved.status_code == 403
    assert Form.objects.get(pk=team_form.pk).field_rules is None
    assert not Entry.objects.filter(action="form.changed").exists()
