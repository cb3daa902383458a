"""Idempotency-Key under the contract's amended rules ("Submission lifecycle") and "Exactness
under concurrency": a deleted form is the same prompt 404 with or without a key, another body
under a used key is a 422, ages come from the database's clock, and a claim taken over keeps
its submission id."""

import threading
import time
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.db import connection
from django.db.models.functions import Now

from accounts.models import User
from forms_app import form_cache
from forms_app.models import Form
from forms_app.services import form_delete
from integrations.models import Delivery
from submissions.intake import idempotency
from submissions.models import IdempotencyKey, Submission
from tests.conftest import submit


def keyed(client, form, key, data=None, **extra):
    return submit(client, form, data or {"name": "Ada"}, HTTP_IDEMPOTENCY_KEY=key, **extra)


def usage(user) -> int:
    return User.objects.get(pk=user.pk).monthly_submission_count


def answered_within(seconds: float, call):
    """``call``'s answer, or None if it did not come within ``seconds`` (a request that never
    ends must fail the test, not hang it)."""
    answers = []

    def run() -> None:
        try:
            answers.append(call())
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=seconds)
    return answers[0] if answers else None


def age_claim(form, key, seconds: int) -> None:
    """Make a claim ``seconds`` old by the database's clock."""
    IdempotencyKey.objects.filter(form=form, key=key).update(
        created_at=Now() - timedelta(seconds=seconds)
    )


# --- Finding 1: a deleted form -------------------------------------------------------------


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_key_to_a_deleted_form_kept_by_this_process_is_the_same_prompt_404(public, form):
    Form.objects.filter(pk=form.pk).update(field_names=["name"])
    assert submit(public, form).status_code == 200  # this process now keeps the form
    slug = form.slug
    form_delete(form=form)
    without_key = submit(public, SimpleNamespace(slug=slug))

    started = time.monotonic()
    with_key = answered_within(
        5, lambda: keyed(public, SimpleNamespace(slug=slug), "after-delete")
    )

    assert with_key is not None, "the keyed post to a deleted form never ended"
    assert time.monotonic() - started < 2
    assert (with_key.status_code, with_key.json()) == (404, without_key.json())
    assert with_key.json() == {
        "success": False, "error": "form_not_found", "message": "There is no form at this address.",
        "errors": [{"code": "FORM_NOT_FOUND", "message": "There is no form at this address."}],
    }


@pytest.mark.django_db(transaction=True)
def test_a_key_to_a_form_deleted_after_it_was_read_is_a_prompt_404(public, form, monkeypatch):
    """A web process still holding the form it read (any backend): the claim meets the
    form's foreign key, which is not another request holding the key."""
    read = Form.objects.select_related("owner").get(pk=form.pk)
    monkeypatch.setattr(form_cache, "form_at", lambda slug: read)
    Form.objects.filter(pk=form.pk).delete()

    response = answered_within(5, lambda: keyed(public, form, "gone"))

    assert response is not None, "the keyed post to a deleted form never ended"
    assert response.status_code == 404
    assert response.json()["error"] == "form_not_found"
    assert not IdempotencyKey.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("key", [None, "deleted-meanwhile"])
def test_a_form_deleted_while_its_submission_is_stored_is_a_404(public, form, monkeypatch,
                                                                 key):
    from submissions.intake import pipeline

    checked = pipeline._checked

    def deleted_meanwhile(*args, **kwargs):
        Form.objects.filter(pk=form.pk).delete()
        return checked(*args, **kwargs)

    monkeypatch.setattr(pipeline, "_checked", deleted_meanwhile)
    extra = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}

    response = submit(public, form, {"name": "Ada"}, **extra)

    assert response.status_code == 404
    assert response.json()["error"] == "form_not_found"
    assert not Submission.objects.exists()


def test_the_wait_checks_its_deadline_even_when_the_row_keeps_vanishing(form, monkeypatch):
    """A row that is there for the insert and gone for the look, pass after pass."""
    monkeypatch.setattr(idempotency, "WAIT_SECONDS", 0.2)
    monkeypatch.setattr(idempotency, "_insert", lambda *args: None)
    monkeypatch.setattr(idempotency, "_current", lambda *args: None)

    started = time.monotonic()
    with pytest.raises(Exception) as raised:
        idempotency.claim(form, "flicker", "body")

    assert getattr(raised.value, "code", None) == "idempotency_key_in_use"
    assert time.monotonic() - started < 2


# --- Finding 2: the same key with another body ---------------------------------------------


@pytest.mark.parametrize(
    "other",
    [{"name": "Bob"}, {"name": "Ada", "extra": "field"}, {"email": "ada@example.com"}],
    ids=["another value", "another field", "other fields"],
)
def test_the_same_key_with_another_body_is_a_422_and_stores_nothing(public, form, user, other):
    first = keyed(public, form, "order-7", {"name": "Ada"})

    again = keyed(public, form, "order-7", other)

    assert first.status_code == 200
    assert again.status_code == 422
    assert again.json() == {
        "success": False,
        "error": "idempotency_key_reused",
        "message": "This Idempotency-Key was already used with a different body; use a new key.",
        "errors": [{"code": "UNSPECIFIED", "message": (
            "This Idempotency-Key was already used with a different body; use a new key.")}],
    }
    assert list(Submission.objects.values_list("data", flat=True)) == [[["name", "Ada"]]]
    assert usage(user) == 1


def test_another_body_while_the_first_is_still_running_is_a_422(public, form):
    IdempotencyKey.objects.create(form=form, key="busy", submission_id=Submission().pk,
                                  fingerprint=idempotency.fingerprint([["name", "Ada"]]))

    response = keyed(public, form, "busy", {"name": "Eve"})

    assert response.status_code == 422
    assert response.json()["error"] == "idempotency_key_reused"


def test_the_same_key_and_body_replays_status_and_id_and_does_nothing_more(public, form, user,
                                                                          hook, receiver):
    first = keyed(public, form, "order-8", {"name": "Ada", "note": "hi"})
    again = keyed(public, form, "order-8", {"name": "Ada", "note": "hi"})

    assert (again.status_code, again.json()) == (first.status_code, first.json()) == (
        200, {"success": True, "message": again.json()["message"], "id": first.json()["id"],
              "ok": True, "next": "http://localhost:8000/thanks"})
    assert Submission.objects.count() == 1
    assert usage(user) == 1
    assert Delivery.objects.count() == 1
    assert len(receiver.requests) == 1


def test_a_fresh_captcha_token_on_a_retry_is_the_same_body(owner_api, public, form,
                                                            monkeypatch):
    from submissions.intake import captcha

    owner_api.patch(f"/api/v1/forms/{form.pk}", {"recaptchaSecret": "s"}, format="json")
    monkeypatch.setattr(captcha, "verify", lambda **kwargs: True)
    first = keyed(public, form, "captcha", {"name": "Ada", "g-recaptcha-response": "t1"})
    again = keyed(public, form, "captcha", {"name": "Ada", "g-recaptcha-response": "t2"})

    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]


# --- Finding 9: takeovers and clocks -------------------------------------------------------


def test_an_abandoned_claim_is_taken_over_under_its_first_submission_id(public, form):
    first_id = Submission().pk
    IdempotencyKey.objects.create(form=form, key="orphan", submission_id=first_id)
    age_claim(form, "orphan", 120)

    response = keyed(public, form, "orphan")

    assert response.status_code == 200
    assert response.json()["id"] == str(first_id)
    assert list(Submission.objects.values_list("pk", flat=True)) == [first_id]


def test_a_first_request_that_stores_after_the_takeover_leaves_one_row(public, form, user,
                                                                        monkeypatch):
    """The first request was alive after all and stores between the takeover and the second
    request's store: the primary key refuses the second row, and both answer the one."""
    from tests.conftest import add_submission

    Form.objects.filter(pk=form.pk).update(field_names=["name"])
    first_id = Submission().pk
    IdempotencyKey.objects.create(form=form, key="late", submission_id=first_id)
    age_claim(form, "late", 120)
    take_over = idempotency._take_over

    def first_stores_meanwhile(record):
        claim = take_over(record)
        late = add_submission(form, {"name": "Ada"})
        Submission.objects.filter(pk=late.pk).update(id=first_id)
        return claim

    monkeypatch.setattr(idempotency, "_take_over", first_stores_meanwhile)

    response = keyed(public, form, "late")

    assert response.status_code == 200
    assert response.json()["id"] == str(first_id)
    assert list(Submission.objects.values_list("pk", flat=True)) == [first_id]
    assert IdempotencyKey.objects.get().state == "stored"


def test_an_app_clock_ahead_of_the_database_takes_over_nothing(public, form, clock,
                                                               monkeypatch):
    monkeypatch.setattr(idempotency, "WAIT_SECONDS", 0.2)
    IdempotencyKey.objects.create(form=form, key="live", submission_id=Submission().pk)
    clock.advance(hours=25)  # this web host's clock is wrong; the database's is not

    response = keyed(public, form, "live")

    assert response.status_code == 409
    assert not Submission.objects.exists()


def test_a_key_is_kept_24_hours_by_the_database_clock(public, form):
    first = keyed(public, form, "daily")
    age_claim(form, "daily", 23 * 3600)
    assert keyed(public, form, "daily").json()["id"] == first.json()["id"]

    age_claim(form, "daily", 25 * 3600)
    later = keyed(public, form, "daily", {"name": "Someone else"})

    assert later.status_code == 200
    assert later.json()["id"] != first.json()["id"]
    assert Submission.objects.count() == 2


def test_the_purge_deletes_keys_past_24_hours_by_the_database_clock(public, form):
    keyed(public, form, "old")
    keyed(public, form, "new")
    age_claim(form, "old", 25 * 3600)

    assert idempotency.expired_purge() == 1
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["new"]


@pytest.mark.sqlite
def test_sqlite_stamps_in_one_millisecond_follow_commit_order(form, monkeypatch):
    """Ten submissions stamped by one frozen millisecond: keyset order is arrival order, not
    the order of their random ids."""
    from core.infra.dbtime import DatabaseNow
    from tests.conftest import add_submission

    monkeypatch.setattr(DatabaseNow, "sqlite_instant", "'2026-11-24 10:00:00.123'")
    stored = [add_submission(form, {"n": str(n)}).pk for n in range(10)]

    in_keyset_order = list(
        Submission.objects.order_by("submitted_at", "id").values_list("pk", flat=True))
    assert in_keyset_order == stored
    assert len(set(Submission.objects.values_list("submitted_at", flat=True))) == 10
