"""The feed on SQLite, which keeps stamps as text."""

import pytest

from submissions import feed
from submissions.models import Submission
from tests.conftest import add_submission


@pytest.mark.sqlite
@pytest.mark.django_db(transaction=True)
def test_a_row_raised_to_another_forms_stamp_is_served_once_each_way(user):
    """SQLite keeps stamps as text: the sequencer's raised stamp must be written in the same
    text as every other, or it sorts above itself and a cursor serves its row again."""
    from forms_app.services import form_create
    from pullapi.services import api_key_create
    from tests.conftest import CommitClient

    a = form_create(owner=user, name="A", notify_owner=False)
    b = form_create(owner=user, name="B", notify_owner=False)
    first = add_submission(a, {"n": "a"})
    feed.catch_up()
    # Form B's row arrives in the same millisecond as form A's (SQLite's clock has ms; the
    # 0008 trigger separates stamps within one form's folder only).
    b1 = add_submission(b, {"n": "b1"})
    Submission.objects.filter(pk=b1.pk).update(submitted_at=Submission.objects.get(
        pk=first.pk).submitted_at)
    feed.catch_up()
    b2 = add_submission(b, {"n": "b2"})
    feed.catch_up()

    key = api_key_create(owner=user, name="s", forms=[str(b.pk)])[1]
    client = CommitClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    seen, params = [], {"formId": b.slug, "order": "asc", "limit": 1}
    for _ in range(10):
        body = client.get("/api/v1/submissions", params).json()
        seen += [row["id"] for row in body["data"]]
        if not body["nextCursor"]:
            break
        params = {"formId": b.slug, "order": "asc", "limit": 1, "cursor": body["nextCursor"]}
    desc, params = [], {"formId": b.slug, "order": "desc", "limit": 1}
    for _ in range(10):
        body = client.get("/api/v1/submissions", params).json()
        desc += [row["id"] for row in body["data"]]
        if not body["nextCursor"]:
            break
        params = {"formId": b.slug, "order": "desc", "limit": 1, "cursor": body["nextCursor"]}
    assert seen == [str(b1.pk), str(b2.pk)]
    assert desc == [str(b2.pk), str(b1.pk)]
