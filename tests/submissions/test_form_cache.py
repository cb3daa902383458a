"""Web processes keep the forms they serve (forms_app/form_cache.py), and a change to a form or
its owner applies from the next submission on, in every process.

"Another process" is played by raw SQL, which no hook of this process sees, followed by the
token renewal that process's ORM would have made (core/infra/versions.py)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts import quota
from accounts.models import User, current_month
from core.infra import redis, versions
from forms_app import form_cache
from forms_app.models import Form
from submissions.intake.admission import in_redis
from submissions.models import Submission
from tests.conftest import submit

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def form(form):
    """A form that knows the field names these tests send: a new name renews the form's
    token (the kept copy's list of names is out of date), which is not what they test."""
    Form.objects.filter(pk=form.pk).update(field_names=["name", "n", "topic"])
    return form


def statements_of(call):
    with CaptureQueriesContext(connection) as queries:
        response = call()
    return response, [query["sql"].split()[0] for query in queries.captured_queries]


def elsewhere(model, pk, **columns):
    """A change made by another web process: its SQL, then the tokens its ORM renews."""
    assignments = ", ".join(f"{name} = %s" for name in columns)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {model._meta.db_table} SET {assignments} WHERE id = %s",
                       [*columns.values(), pk])
    versions.changed(model, [pk])


def unseen(model, pk, **columns):
    """The same change with its token renewal lost."""
    assignments = ", ".join(f"{name} = %s" for name in columns)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {model._meta.db_table} SET {assignments} WHERE id = %s",
                       [*columns.values(), pk])


def test_a_kept_form_is_not_read_again(public, form):
    submit(public, form, {"name": "first"})  # reads and keeps the form

    response, statements = statements_of(lambda: submit(public, form, {"name": "second"}))

    assert response.status_code == 200
    assert "SELECT" not in statements


def test_each_request_gets_its_own_copy_of_a_kept_form(public, form):
    """A kept form is copied for each request, not built again: what one request sets on its
    form (a kept copy's tokens, a cached relation) is not what the next one finds."""
    submit(public, form, {"name": "first"})
    one, two = form_cache.form_at(form.slug), form_cache.form_at(form.slug)

    assert one is not two and one.owner is not two.owner
    assert (one.pk, one.owner_id, one.slug) == (two.pk, two.owner_id, form.slug)
    assert one.owner.pk == form.owner_id and not one._state.adding
    one.name = "changed here"
    one.owner.monthly_submission_limit = 1
    assert two.name == form.name
    assert form_cache.form_at(form.slug).owner.monthly_submission_limit != 1


def test_without_its_token_renewed_a_change_would_go_unseen(public, form):
    """What the tokens are for: the kept copy is trusted until they say otherwise."""
    submit(public, form)
    unseen(Form, form.pk, allowed_origins='["https://only.example"]')

    assert submit(public, form, HTTP_ORIGIN="https://elsewhere.example").status_code == 200


def test_a_change_in_another_process_applies_at_the_next_submission(public, form):
    submit(public, form)  # one in this address's window
    elsewhere(Form, form.pk, rate_limit=2)

    statuses = [submit(public, form, {"n": str(n)}).status_code for n in range(2)]

    assert statuses == [200, 429]


def test_an_origin_refused_by_a_kept_form_is_checked_on_a_fresh_read(public, form):
    elsewhere(Form, form.pk, allowed_origins='["https://old.example"]')
    submit(public, form, HTTP_ORIGIN="https://old.example")
    unseen(Form, form.pk, allowed_origins='["https://new.example"]')

    response = submit(public, form, HTTP_ORIGIN="https://new.example")

    assert response.status_code == 200


def test_the_owners_settings_are_checked_too(public, form, user):
    submit(public, form)
    elsewhere(User, user.pk, monthly_submission_limit=1)

    response = submit(public, form)

    assert response.status_code == 403
    assert response.json()["error"] == "monthly_limit_reached"


def test_an_update_through_the_orm_renews_the_token(public, form, user):
    submit(public, form)
    User.objects.filter(pk=user.pk).update(is_active=False)

    assert submit(public, form).status_code == 404


def test_a_deleted_form_is_gone_at_once(public, form):
    submit(public, form)
    Form.objects.filter(pk=form.pk).delete()

    assert submit(public, form).status_code == 404


def test_a_change_through_the_api_applies_at_once(public, form, owner_api):
    submit(public, form)
    owner_api.patch(f"/api/v1/forms/{form.pk}", {"allowedOrigins": ["https://a.example"]},
                    format="json")

    response = submit(public, form, HTTP_ORIGIN="https://b.example")

    assert response.status_code == 403
    assert response.json()["error"] == "origin_not_allowed"


def test_tokens_lost_in_redis_mean_a_fresh_read(public, form):
    submit(public, form)  # one in this address's window
    unseen(Form, form.pk, rate_limit=2)
    redis.client().delete(*form_cache.version_keys(form))  # as after a Redis restart

    statuses = [submit(public, form, {"n": str(n)}).status_code for n in range(2)]

    assert statuses == [200, 429]


def test_a_change_committed_while_the_form_is_read_is_not_kept(public, form, monkeypatch):
    """Between the first read and the tokens, another process commits a change and renews
    them: what is kept is the second read, which has the change."""
    real_read = versions.read

    def read_after_a_change(client, keys):
        monkeypatch.setattr(versions, "read", real_read)
        elsewhere(Form, form.pk, rate_limit=1)
        return real_read(client, keys)

    monkeypatch.setattr(versions, "read", read_after_a_change)

    statuses = [submit(public, form, {"n": str(n)}).status_code for n in range(2)]

    assert statuses == [200, 429]


def test_a_stale_form_does_not_change_what_a_bad_body_is_told(public, form):
    submit(public, form)
    elsewhere(Form, form.pk, name="Renamed")

    response = public.post(f"/api/v1/f/{form.slug}", "{not json", content_type="application/json")

    assert response.status_code == 400
    assert response.json()["error"] == "malformed_body"
    assert Submission.objects.count() == 1


def test_a_stale_form_stores_its_submission_once(public, form):
    submit(public, form)
    elsewhere(Form, form.pk, name="Renamed")

    response = public.post(f"/api/v1/f/{form.slug}", {"name": "Ada", "topic": "hello"})

    assert response.status_code in (200, 303)
    assert Submission.objects.count() == 2
    assert Submission.objects.order_by("submitted_at").last().data == [
        ["name", "Ada"], ["topic", "hello"]]


def test_while_redis_is_away_no_kept_form_is_used(public, form, monkeypatch):
    import redis as redis_py

    submit(public, form)
    unseen(Form, form.pk, rate_limit=1)
    dead = redis_py.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)
    monkeypatch.setattr(redis, "client", lambda: dead)
    try:
        statuses = [submit(public, form, {"n": str(n)}).status_code for n in range(2)]
    finally:
        monkeypatch.undo()
        redis.recovered()

    assert statuses == [200, 429]


def test_a_form_changed_while_the_quota_is_seeded_is_run_again(public, form, user,
                                                               monkeypatch):
    """Admitted on a fresh read and reserved in Redis, never stored unreserved: the database
    alone cannot see another process's reservations in flight."""
    from accounts import quota
    from accounts.models import current_month

    submit(public, form)
    redis.client().delete(quota.redis_key(user.pk, current_month()))  # not seeded
    real_used = quota.used

    def used_while_the_form_changes(*args):
        monkeypatch.setattr(quota, "used", real_used)
        elsewhere(Form, form.pk, name="Renamed")
        return real_used(*args)

    monkeypatch.setattr(quota, "used", used_while_the_form_changes)

    assert submit(public, form, {"n": "2"}).status_code == 200
    counted = int(redis.client().get(quota.redis_key(user.pk, current_month())))
    assert counted == quota.used(user.pk) == 2


def test_a_claim_taken_over_on_a_stale_form_keeps_the_first_requests_id(public, form):
    """A keyed retry takes over an abandoned claim under the first request's id, then finds
    its kept form out of date. The claim is held across the fresh read: given back and taken
    again, it would come back under a new id, and the first request, alive after all, would
    store a second row under its own."""
    from datetime import timedelta

    from django.db.models.functions import Now

    from submissions.models import IdempotencyKey

    submit(public, form)  # this process now keeps the form
    first_id = Submission().pk
    IdempotencyKey.objects.create(form=form, key="k-1", submission_id=first_id)
    IdempotencyKey.objects.filter(key="k-1").update(created_at=Now() - timedelta(minutes=10))
    elsewhere(Form, form.pk, name="Renamed")

    response = submit(public, form, {"name": "Ada"}, HTTP_IDEMPOTENCY_KEY="k-1")

    assert response.status_code == 200
    assert response.json()["id"] == str(first_id)
    assert Submission.objects.filter(pk=first_id).exists()
    assert IdempotencyKey.objects.get(key="k-1").submission_id == first_id


def test_a_form_changed_while_the_quota_is_seeded_counts_the_rate_once(public, form,
                                                                       monkeypatch):
    """The first admission counts the rate and finds no quota counter; while it is seeded the
    form changes, the admission after the seeding finds the kept copy stale, and the request
    runs again on a fresh read, counting its rate there. The first count is given back: with
    a rate of 1, that one request is accepted."""
    Form.objects.filter(pk=form.pk).update(rate_limit=1)
    submit(public, form, {"name": "first"})  # reads and keeps the form
    client = redis.client()
    client.delete(*client.keys("formflow:rate:*"), quota.redis_key(form.owner_id, current_month()))
    seed = in_redis._seed

    def seeded_while_the_form_changes(*args):
        seed(*args)
        elsewhere(Form, form.pk, name="Renamed")

    monkeypatch.setattr(in_redis, "_seed", seeded_while_the_form_changes)
    assert submit(public, form, {"name": "once"}).status_code == 200
