"""While the database is unreachable, requests get 503 with Retry-After in the contract's
shape, never a 500, and nothing half-done is left behind."""

from django.db import OperationalError

from forms_app import form_cache
from forms_app import views as form_views
from submissions.intake.store import orm, pg
from submissions.models import Submission
from tests.conftest import BROWSER_ACCEPT, submit


def unreachable(*_args, **_kwargs):
    raise OperationalError("connection to server at 127.0.0.1:5432 failed: Connection refused")


def test_a_submission_during_an_outage_is_a_503_and_can_be_sent_again(
    public, form, user, monkeypatch
):
    user.monthly_submission_limit = 1
    user.save()
    # Where each setup writes: one statement (PostgreSQL with Redis), or a transaction.
    monkeypatch.setattr(pg, "store", unreachable)
    monkeypatch.setattr(orm, "store", unreachable)

    response = submit(public, form)

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["error"] == "service_unavailable"
    monkeypatch.undo()
    # Its quota reservation was given back: the one submission of the month still goes in,
    # into the inbox: the failed attempt does not make the retry a duplicate.
    assert submit(public, form).status_code == 200
    assert Submission.objects.count() == 1
    assert Submission.inbox.count() == 1


def test_an_html_form_post_during_an_outage_gets_a_503_page(public, form, monkeypatch):
    monkeypatch.setattr(form_cache, "form_at", unreachable)

    response = public.post(
        f"/api/v1/f/{form.slug}", {"name": "Ada"}, HTTP_ACCEPT=BROWSER_ACCEPT
    )

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response["Content-Type"].startswith("text/html")


def test_an_api_request_during_an_outage_is_a_503(owner_api, monkeypatch):
    monkeypatch.setattr(form_views.selectors, "forms_of", unreachable)

    response = owner_api.get("/api/v1/forms")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["error"] == "service_unavailable"
