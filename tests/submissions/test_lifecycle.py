"""Submission lifecycle (contract): the id in the answer, Idempotency-Key, retentionDays and
the purge job."""

import threading
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models.functions import Now
from django.test import Client

from integrations.models import Delivery
from submissions.intake import idempotency
from submissions.models import IdempotencyKey, Submission
from tests.conftest import add_submission, post_html_form, submit


def usage(user) -> int:
    user.refresh_from_db()
    return user.monthly_submission_count


def keyed(client, form, key, data=None, **extra):
    return submit(client, form, data or {"name": "Ada"}, HTTP_IDEMPOTENCY_KEY=key, **extra)


# --- Idempotency-Key -----------------------------------------------------------------------


def test_the_same_key_answers_the_first_answer_and_does_nothing_more(public, form, user, hook,
                                                                       receiver):
    first = keyed(public, form, "order-42")
    again = keyed(public, form, "order-42")

    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()
    stored = Submission.objects.get()
    assert first.json()["id"] == str(stored.pk)
    assert stored.fields == {"name": "Ada"}
    assert usage(user) == 1
    assert len(receiver.requests) == 1


def test_keys_are_per_form(public, form, user):
    from forms_app.services import form_create

    other = form_create(owner=user, name="Other")

    first, second = keyed(public, form, "k"), keyed(public, other, "k")

    assert first.json()["id"] != second.json()["id"]
    assert Submission.objects.count() == 2


def test_without_a_key_each_post_is_its_own(public, form):
    assert submit(public, form).json()["id"] != submit(public, form).json()["id"]
    assert Submission.objects.count() == 2


@pytest.mark.parametrize(
    "key", ["", "x" * 256, "caf\u00e9", "tab\there", "new\nline", "\x7f"],
)
def test_a_key_that_breaks_the_rules_is_a_400(public, form, key):
    response = keyed(public, form, key)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_idempotency_key"
    assert not Submission.objects.exists()
    assert not IdempotencyKey.objects.exists()


def test_the_widest_key_is_taken(public, form):
    key = "".join(chr(c) for c in range(32, 127)) + "k" * 160
    assert len(key) == 255

    assert keyed(public, form, key).status_code == 200


def test_a_failed_request_gives_its_key_back(public, form):
    form.rate_limit = 1
    form.save()
    submit(public, form)
    assert keyed(public, form, "retry-me").status_code == 429

    form.rate_limit = 10
    form.save()
    retried = keyed(public, form, "retry-me")

    assert retried.status_code == 200
    assert Submission.objects.filter(pk=retried.json()["id"]).exists()


def test_an_html_post_with_a_key_gets_the_same_redirect(public, form):
    first = post_html_form(public, form, HTTP_IDEMPOTENCY_KEY="html-1")
    again = post_html_form(public, form, HTTP_IDEMPOTENCY_KEY="html-1")

    assert first.status_code == again.status_code == 303
    assert first["Location"] == again["Location"]
    assert Submission.objects.count() == 1


def test_a_honeypot_catch_with_a_key_replays_its_made_up_id(public, form):
    form.honeypot_field = "_gotcha"
    form.save()

    first = keyed(public, form, "bot", {"name": "Bot", "_gotcha": "x"})
    again = keyed(public, form, "bot", {"name": "Bot", "_gotcha": "x"})

    assert first.json() == again.json()
    assert not Submission.objects.exists()


def test_a_held_submission_with_a_key_is_held_once(owner_api, public, form, user):
    owner_api.patch(f"/api/v1/forms/{form.pk}", {"blockedWords": ["casino"]}, format="json")

    first = keyed(public, form, "spam-1", {"message": "casino"})
    again = keyed(public, form, "spam-1", {"message": "casino"})

    assert first.json()["id"] == again.json()["id"]
    assert list(Submission.objects.values_list("status", flat=True)) == ["spam"]


def test_a_copy_waiting_on_a_running_first_request_gives_up_with_409(public, form,
                                                                      monkeypatch):
    monkeypatch.setattr(idempotency, "WAIT_SECONDS", 0.2)
    IdempotencyKey.objects.create(form=form, key="busy", submission_id=Submission().pk)

    response = keyed(public, form, "busy")

    assert response.status_code == 409
    assert response.json()["error"] == "idempotency_key_in_use"
    assert response["Retry-After"] == "1"
    assert not Submission.objects.exists()


def test_a_stored_submission_answers_even_if_its_request_could_not_say_so(public, form):
    submission = add_submission(form, {"name": "Ada"})
    IdempotencyKey.objects.create(form=form, key="cut-off", submission_id=submission.pk)

    response = keyed(public, form, "cut-off")

    assert response.json()["id"] == str(submission.pk)
    assert Submission.objects.count() == 1


def test_the_preflight_lets_the_key_header_through(public, form):
    response = public.options(
        f"/api/v1/f/{form.slug}",
        HTTP_ORIGIN="https://site.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type, idempotency-key",
    )

    assert "idempotency-key" in response["Access-Control-Allow-Headers"].lower()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_twenty_copies_at_once_store_count_and_deliver_once(form, user, hook, receiver):
    start = threading.Barrier(20, timeout=10)
    answers = []

    def send() -> None:
        client = Client()
        start.wait()
        try:
            response = client.post(f"/api/v1/f/{form.slug}", {"name": "Ada"},
                                   content_type="application/json", HTTP_IDEMPOTENCY_KEY="once")
            answers.append((response.status_code, response.json().get("id")))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    stored = Submission.objects.get()
    assert answers == [(200, str(stored.pk))] * 20
    assert usage(user) == 1
    assert Delivery.objects.count() == 1
    assert len(receiver.requests) == 1


# --- retentionDays and the purge -----------------------------------------------------------


@pytest.mark.parametrize("value", [0, 3651, -1, "30", 1.5, True])
def test_retention_outside_1_to_3650_days_is_a_400(owner_api, form, value):
    response = owner_api.patch(f"/api/v1/forms/{form.pk}", {"retentionDays": value},
                               format="json")

    assert response.status_code == 400
    assert "retentionDays" in response.json()["details"]


@pytest.mark.parametrize("value", [1, 30, 3650, None])
def test_retention_is_set_and_shown(owner_api, form, value):
    response = owner_api.patch(f"/api/v1/forms/{form.pk}", {"retentionDays": value},
                               format="json")

    assert response.status_code == 200
    assert response.json()["retentionDays"] == value
    assert owner_api.get(f"/api/v1/forms/{form.pk}").json()["retentionDays"] == value


def test_the_purge_deletes_only_what_is_past_its_form_retention(owner_api, form, user, hook,
                                                                clock):
    from forms_app.services import form_create

    owner_api.patch(f"/api/v1/forms/{form.pk}", {"retentionDays": 7}, format="json")
    kept_forever = form_create(owner=user, name="Keep")
    old = add_submission(form, {"n": "old"})
    elsewhere = add_submission(kept_forever, {"n": "elsewhere"})
    clock.advance(days=6)
    recent = add_submission(form, {"n": "recent"}, at=clock.current)
    clock.advance(days=1, minutes=1)

    call_command("purge", stdout=(out := _Output()))

    assert set(Submission.objects.values_list("pk", flat=True)) == {recent.pk, elsewhere.pk}
    assert not Delivery.objects.filter(submission_id=old.pk).exists()
    assert "submissions: 1 deleted" in out.text
    assert usage(user) == 3  # the month's count stays


def test_retention_counts_from_arrival_even_after_a_rescue(owner_api, public, form, clock):
    owner_api.patch(f"/api/v1/forms/{form.pk}",
                    {"retentionDays": 2, "blockedWords": ["casino"]}, format="json")
    submit(public, form, {"message": "casino night"})
    held = Submission.objects.get()
    clock.advance(days=1)
    Submission.objects.filter(pk=held.pk).update(status="inbox", received_at=held.submitted_at,
                                                 submitted_at=clock.current)
    clock.advance(days=1, minutes=1)

    call_command("purge", stdout=_Output())

    assert not Submission.objects.exists()


def test_the_purge_deletes_in_batches(form, clock):
    from submissions.services import retention_purge

    form.retention_days = 1
    form.save()
    for n in range(5):
        add_submission(form, {"n": str(n)})
    clock.advance(days=2)

    assert retention_purge(batch=2) == 5
    assert not Submission.objects.exists()


def test_the_purge_removes_old_spam_expired_keys_and_revoked_tokens(public, form, user, clock):
    from accounts.models import RevokedToken

    form.blocked_words = ["casino"]
    form.save()
    submit(public, form, {"message": "casino"})
    keyed(public, form, "k")
    # Keys age by the database's clock, not the service's.
    IdempotencyKey.objects.update(created_at=Now() - timedelta(days=2))
    RevokedToken.objects.create(jti="gone", expires_at=clock.current + timedelta(hours=1))
    clock.advance(days=31)

    out = _Output()
    call_command("purge", stdout=out)

    assert list(Submission.objects.values_list("status", flat=True)) == ["inbox"]
    assert not IdempotencyKey.objects.exists()
    assert not RevokedToken.objects.exists()
    assert "spam: 1 deleted" in out.text
    assert "idempotency_keys: 1 deleted" in out.text
    assert "revoked_tokens: 1 deleted" in out.text


def test_the_purge_runs_every_hour_from_beat():
    from config.celery import app

    entries = [e for e in app.conf.beat_schedule.values() if e["task"] == "submissions.tasks.purge"]
    assert [entry["schedule"] for entry in entries] == [3600]


def test_the_worker_knows_the_purge_by_the_name_beat_sends():
    """The job moved out of submissions/tasks.py (to integrations/jobs.py) under its name."""
    from config.celery import app

    app.loader.import_default_modules()
    assert app.tasks["submissions.tasks.purge"].name == "submissions.tasks.purge"


class _Output:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass
