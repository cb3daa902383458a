"""The bulk sync: GET /api/v1/submissions/stream (contract, "Pull API and API keys")."""

import json
from datetime import timedelta

import pytest

from core import clock as clock_module
from core.timefmt import iso
from tests.conftest import CommitClient, add_submission, create_key

URL = "/api/v1/submissions/stream"


def lines(response) -> list[dict]:
    assert response.streaming
    body = b"".join(response.streaming_content).decode()
    assert body == "" or body.endswith("\n")
    return [json.loads(line) for line in body.splitlines()]


def test_every_submission_oldest_first_in_the_pull_shape(puller, form):
    first = add_submission(form, {"b": "1", "a": "2"}, at=clock_module.now() - timedelta(1))
    second = add_submission(form, {"c": "3"})

    response = puller.get(URL, {"formId": str(form.pk)})

    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    rows = lines(response)
    assert [row["id"] for row in rows] == [str(first.pk), str(second.pk)]
    listed = puller.get("/api/v1/submissions", {"formId": str(form.pk), "order": "asc"})
    assert rows == listed.json()["data"]  # the list's shape, field order kept
    assert list(rows[0]["fields"]) == ["b", "a"]
    assert response["X-RateLimit-Limit"] == "60"


def test_since_is_inclusive_and_fields_narrow(puller, form):
    add_submission(form, {"n": "old"}, at=clock_module.now() - timedelta(days=2))
    kept = add_submission(form, {"n": "new", "x": "y"}, at=clock_module.now() - timedelta(days=1))

    response = puller.get(URL, {"formId": form.slug, "since": iso(kept.submitted_at),
                                "fields": "n"})

    assert lines(response) == [{"id": str(kept.pk), "formId": str(form.pk),
                                "submittedAt": iso(kept.submitted_at), "fields": {"n": "new"}}]


def test_an_empty_form_streams_nothing(puller, form):
    assert lines(puller.get(URL, {"formId": str(form.pk)})) == []


def test_held_submissions_stay_out(puller, public, form):
    from tests.conftest import submit

    form.blocked_words = ["casino"]
    form.save()
    submit(public, form, {"message": "casino"})
    submit(public, form, {"message": "hello"})

    assert [row["fields"]["message"] for row in lines(puller.get(URL, {"formId": form.slug}))] \
        == ["hello"]


@pytest.mark.parametrize(("params", "bad"), [({}, "formId"),
                                             ({"since": "yesterday"}, "since"),
                                             ({"fields": ","}, "fields")])
def test_bad_parameters_are_400(puller, form, params, bad):
    query = {"formId": str(form.pk), **params} if bad != "formId" else params

    response = puller.get(URL, query)

    assert response.status_code == 400
    assert bad in response.json()["details"]


def test_a_form_the_key_cannot_read_is_404(puller, user):
    from forms_app.services import form_create

    other = form_create(owner=user, name="Not on the key")

    assert puller.get(URL, {"formId": str(other.pk)}).status_code == 404


def test_a_dashboard_token_is_401(owner_api, form):
    assert owner_api.get(URL, {"formId": str(form.pk)}).status_code == 401


def test_one_stream_per_key_at_a_time(puller, form, user):
    add_submission(form, {"n": "1"})
    first = puller.get(URL, {"formId": str(form.pk)})
    chunks = iter(first.streaming_content)
    next(chunks)  # the first stream is running

    second = puller.get(URL, {"formId": str(form.pk)})
    assert second.status_code == 429
    assert second.json()["error"] == "stream_in_progress"
    assert second["Retry-After"] == "5"
    other = CommitClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {create_key(user, [form], name='other')}")
    assert other.get(URL, {"formId": str(form.pk)}).status_code == 200

    list(chunks)  # the first ends, and gives the lease back
    assert puller.get(URL, {"formId": str(form.pk)}).status_code == 200


def test_a_stream_counts_as_one_request(puller, form):
    for n in range(3):
        add_submission(form, {"n": str(n)})

    response = puller.get(URL, {"formId": str(form.pk)})
    lines(response)

    assert response["X-RateLimit-Remaining"] == "59"
