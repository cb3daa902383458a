"""Owner and operator edits never write back counters that live traffic moved meanwhile."""

from django.contrib.admin.sites import site
from django.test import RequestFactory

from accounts.models import User
from forms_app.models import Form
from forms_app.services import form_update
from integrations.models import Integration
from integrations.services import integration_create, integration_update
from submissions import folders
from tests.conftest import submit


def test_form_update_keeps_the_submission_count(public, form):
    stale = Form.objects.get(pk=form.pk)
    submit(public, form, {"name": "Ada", "n": "1"})
    submit(public, form, {"name": "Ada", "n": "2"})

    form_update(form=stale, name="Renamed")

    fresh = Form.objects.get(pk=form.pk)
    assert (fresh.name, folders.size(form.pk)) == ("Renamed", 2)


def test_integration_update_keeps_the_delivery_status(user):
    integration = integration_create(
        owner=user, type="WEBHOOK", config={"url": "https://a.example"}
    )
    stale = Integration.objects.get(pk=integration.pk)
    Integration.objects.filter(pk=integration.pk).update(status="failing", last_error="HTTP 500")

    integration_update(integration=stale, enabled=False)

    fresh = Integration.objects.get(pk=integration.pk)
    assert (fresh.enabled, fresh.status, fresh.last_error) == (False, "failing", "HTTP 500")


def test_admin_save_writes_only_changed_fields(user, public, form):
    stale = User.objects.get(pk=user.pk)
    submit(public, form)
    stale.monthly_submission_limit = 77
    user_admin = site._registry[User]
    request = RequestFactory().post("/")

    class ChangedForm:
        changed_data = ["monthly_submission_limit"]

    user_admin.save_model(request, stale, ChangedForm(), change=True)

    fresh = User.objects.get(pk=user.pk)
    assert (fresh.monthly_submission_limit, fresh.monthly_submission_count) == (77, 1)
