"""A form's owner in the admin: fixed once the form exists, so its limits (its account of
record) never stay on an account that no longer owns it."""

from __future__ import annotations

import re

import pytest

from forms_app.models import Form

pytestmark = pytest.mark.django_db


def posted_form(admin_client, page: str, **changes) -> dict:
    """The change page's form as the browser would post it, with ``changes``."""
    html = admin_client.get(page).content.decode()
    fields = dict(re.findall(r'<input type="(?:hidden|text|number|url)" name="([^"]+)" '
                             r'value="([^"]*)"', html))
    textareas = dict(re.findall(r'<textarea name="([^"]+)"[^>]*>\s*([^<]*)</textarea>', html))
    return {**fields, **textareas, "spam_filter": "on", "allow_extra_fields": "on",
            "captcha_provider": "recaptcha", **changes}


def test_a_forms_owner_is_not_changed_in_the_admin(admin_client, form, user, other_user):
    page = f"/admin/forms_app/form/{form.pk}/change/"

    response = admin_client.post(page, posted_form(admin_client, page, name="Renamed",
                                                   owner=str(other_user.pk)))

    assert response.status_code == 302, response.content.decode()[:3000]
    saved = Form.objects.get(pk=form.pk)
    assert (saved.name, saved.owner_id, saved.account_id) == ("Renamed", user.pk, user.pk)


def test_a_form_added_in_the_admin_still_names_its_owner(admin_client, user):
    page = "/admin/forms_app/form/add/"

    assert 'name="owner"' in admin_client.get(page).content.decode()
