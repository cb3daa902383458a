"""Field rules on a form that keeps files: a file field takes a stored file, and a
submission the rules refuse keeps no file (contract, "Field rules" and "File uploads")."""

import pytest

from files.models import StoredFile
from forms_app.services import form_update
from submissions.models import Submission
from tests.files.helpers import PDF, post, upload, upload_form

pytestmark = pytest.mark.parametrize("store", ["local"], indirect=True)


@pytest.fixture
def form(user):
    form = upload_form(user)
    return form_update(form=form, field_rules=[
        {"name": "cv", "type": "file", "required": True},
        {"name": "email", "type": "email", "required": True},
    ])


def test_a_file_field_takes_the_stored_file(api, form, store):
    response = post(api, form, {"email": "ada@example.com", "cv": upload("cv.pdf", PDF)})

    assert response.status_code == 200
    assert StoredFile.objects.get().field == "cv"
    assert len(store.keys()) == 1


def test_a_refused_submission_keeps_no_file(api, form, store):
    response = post(api, form, {"email": "not an address", "cv": upload("cv.pdf", PDF)})

    assert response.status_code == 422
    assert response.json()["errors"] == [{"field": "email", "code": "TYPE_EMAIL",
                                          "message": "“email” must be a valid email address."}]
    assert not Submission.objects.exists()
    assert not StoredFile.objects.exists()
    assert store.keys() == []


def test_a_required_file_not_chosen_is_missing(api, form, store):
    response = post(api, form, {"email": "ada@example.com"})

    assert response.status_code == 422
    assert response.json()["details"] == {"cv": "“cv” is required."}
