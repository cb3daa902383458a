"""OPTIONS on a form's submission routes answers what the view takes, never a 500: these
views have no serializer class for DRF's metadata to describe."""

import pytest

from tests.conftest import add_submission

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("tail", ["", "/not-spam", "/spam", "/deliveries"])
def test_options_on_a_submission_route_is_answered(owner_api, form, tail):
    submission = add_submission(form, {"name": "Ada"})

    response = owner_api.options(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}{tail}")

    assert response.status_code == 200
    assert "actions" not in response.json()


def test_options_on_a_forms_submissions_and_export_is_answered(owner_api, form):
    for path in ("submissions", "export"):
        response = owner_api.options(f"/api/v1/forms/{form.pk}/{path}")
        assert response.status_code == 200
