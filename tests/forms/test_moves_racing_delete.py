"""A rescue, a mark as spam or a delete of one submission racing the delete of its form,
or of the submission itself (contract, "Deleting races nothing into an error"): the owner's
request answers what it did or 404, never 500.

From the outside, 8 rounds of 12 moves racing DELETE /api/v1/forms/{id} over HTTP on
PostgreSQL: 29 of the 64 rescues and marks answered 500 (Submission.DoesNotExist: the view
had found the submission, and the form's delete took it before the move locked it)."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from forms_app.models import Form
from forms_app.services import form_create
from submissions.api import form_submissions
from submissions.models import Submission
from tests.conftest import PASSWORD, add_submission, bearer, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def _owner_client(owner) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=bearer(owner))
    return client


def _gone_after_lookup(monkeypatch, go) -> None:
    """The view finds the submission; then, before the move locks it, ``go`` deletes it
    (a request of its own, committed)."""
    real = form_submissions.UnderForm.submission
    once = []

    def found_then_gone(view, submission_id):
        submission = real(view, submission_id)
        if not once:  # the move's lookup; not the delete's own
            once.append(True)
            assert go() == 204
        return submission

    monkeypatch.setattr(form_submissions.UnderForm, "submission", found_then_gone)


@pytest.mark.parametrize("move", ["not-spam", "spam"])
@pytest.mark.parametrize("what_goes", ["form", "submission"])
def test_a_move_whose_submission_went_meanwhile_answers_404(shared_database, monkeypatch,
                                                            move, what_goes):
    owner = make_user()
    form = form_create(owner=owner, name="Going", rate_limit=10_000, notify_owner=False)
    submission = add_submission(form, {"name": "moving"})
    if move == "not-spam":
        Submission.objects.filter(pk=submission.pk).update(status="spam")
    url = f"/api/v1/forms/{form.pk}"
    gone = url if what_goes == "form" else f"{url}/submissions/{submission.pk}"
    _gone_after_lookup(monkeypatch, lambda: _owner_client(owner).delete(gone).status_code)

    response = _owner_client(owner).post(f"{url}/submissions/{submission.pk}/{move}")

    assert response.status_code == 404, response.content
    assert response.json()["error"] == "not_found"
    assert not Submission.objects.filter(pk=submission.pk).exists()
    assert Form.objects.filter(pk=form.pk).exists() == (what_goes == "submission")


@pytest.mark.parametrize("move", ["not-spam", "spam"])
def test_the_dashboards_buttons_on_a_submission_that_went_meanwhile_answer_404(
        shared_database, monkeypatch, move):
    """The dashboard's Spam and Not spam buttons run the same moves: the page found the
    submission, the form's delete took it before the move locked it."""
    from dashboard.views import submissions as pages

    owner = make_user()
    form = form_create(owner=owner, name="Going", rate_limit=10_000, notify_owner=False)
    submission = add_submission(form, {"name": "moving"})
    if move == "not-spam":
        Submission.objects.filter(pk=submission.pk).update(status="spam")
    real = pages.submission_of

    def found_then_gone(of, submission_id):
        found = real(of, submission_id)
        assert _owner_client(owner).delete(f"/api/v1/forms/{form.pk}").status_code == 204
        return found

    monkeypatch.setattr(pages, "submission_of", found_then_gone)
    browser = Client()
    assert browser.post("/dashboard/login",
                        {"email": owner.email, "password": PASSWORD}).status_code == 302

    response = browser.post(
        f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/mark", {"mark": move})

    assert response.status_code == 404
    assert not Form.objects.filter(pk=form.pk).exists()
