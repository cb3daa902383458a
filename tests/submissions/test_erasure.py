"""Erasure by address, /api/v1/erasures (contract, "Event subscriptions and erasure")."""

import hashlib

import pytest

from submissions.models import Erasure, Submission
from tests.conftest import add_submission

ERASURES = "/api/v1/erasures"


@pytest.fixture
def second_form(user):
    from forms_app.services import form_create

    return form_create(owner=user, name="Newsletter")


@pytest.fixture
def people(form, second_form, other_user):
    """Ada's submissions in both forms and both folders, and others' that must stay."""
    from forms_app.services import form_create

    theirs = form_create(owner=other_user, name="Theirs")
    made = {
        "email": add_submission(form, {"name": "Ada", "email": "ADA@Example.COM"}),
        "text": add_submission(second_form, {"note": "Reach me at ada@example.com."}),
        "list": add_submission(second_form, [["cc", ["bob@example.com", "ada@example.com"]]]),
        "spam": add_submission(form, {"email": "ada@example.com", "n": "2"}),
        "longer": add_submission(form, {"email": "linda@example.com"}),
        "other": add_submission(form, {"email": "ada@example.org"}),
        "stranger": add_submission(theirs, {"email": "ada@example.com"}),
    }
    Submission.objects.filter(pk=made["spam"].pk).update(status="spam")
    return made


def test_the_preview_counts_without_deleting(owner_api, form, second_form, people):
    response = owner_api.get(f"{ERASURES}/preview", {"email": "Ada@example.com"})

    assert response.status_code == 200
    assert response.json()["submissions"] == 4
    assert sorted(response.json()["forms"]) == sorted([str(form.pk), str(second_form.pk)])
    assert Submission.objects.count() == 7


def test_an_erasure_deletes_every_match_and_keeps_a_masked_receipt(owner_api, people):
    response = owner_api.post(ERASURES, {"email": "ada@example.com"}, format="json")

    assert response.status_code == 201
    receipt = Erasure.objects.get()
    assert response.json() == {
        "_id": str(receipt.pk),
        "email": "****.com",
        "submissions": 4,
        "createdAt": response.json()["createdAt"],
    }
    left = set(Submission.objects.values_list("pk", flat=True))
    assert left == {people[name].pk for name in ("longer", "other", "stranger")}
    assert receipt.email_hash == hashlib.sha256(b"ada@example.com").hexdigest()
    assert "ada@" not in str(Erasure.objects.values().get())
    assert owner_api.get(ERASURES).json() == [response.json()]


def test_receipts_are_the_accounts_own(owner_api, other_api, people):
    owner_api.post(ERASURES, {"email": "ada@example.com"}, format="json")

    assert other_api.get(ERASURES).json() == []
    assert other_api.get(f"{ERASURES}/preview", {"email": "ada@example.com"}).json() == {
        "submissions": 1, "forms": [str(people["stranger"].form_id)]}


def test_nothing_to_erase_still_gives_a_receipt(owner_api, form):
    response = owner_api.post(ERASURES, {"email": "nobody@example.com"}, format="json")

    assert response.status_code == 201
    assert response.json()["submissions"] == 0


@pytest.mark.parametrize("email", ["", "ada", "ada@", "Ada <ada@example.com>", 5, None])
def test_a_bad_address_is_400_under_email(owner_api, people, email):
    posted = owner_api.post(ERASURES, {"email": email}, format="json")
    previewed = owner_api.get(f"{ERASURES}/preview",
                              {} if email is None else {"email": str(email)})

    for response in (posted, previewed):
        assert response.status_code == 400
        assert list(response.json()["details"]) == ["email"]
    assert Submission.objects.count() == 7
    assert not Erasure.objects.exists()


def test_only_the_dashboard_may_erase(api, pull_key, people):
    assert api.post(ERASURES, {"email": "ada@example.com"}, format="json").status_code == 401
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {pull_key}")
    assert api.post(ERASURES, {"email": "ada@example.com"}, format="json").status_code == 401
    assert api.get(f"{ERASURES}/preview", {"email": "ada@example.com"}).status_code == 401
    assert Submission.objects.count() == 7
