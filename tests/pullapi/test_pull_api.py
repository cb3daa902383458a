from datetime import UTC, datetime, timedelta

import pytest

from accounts.models import User
from accounts.services import token_for
from core.infra import ratelimit
from core.timefmt import iso
from forms_app.services import form_create
from pullapi.models import ApiKey
from submissions.models import Submission
from tests.conftest import add_submission, create_key

LIST = "/api/v1/submissions"
BASE = datetime(2026, 1, 1, tzinfo=UTC)


def add(form, n, at=None):
    data = [["n", n], ["email", f"{n}@example.com"]]
    return add_submission(form, data, at=at, ip="198.51.100.1", user_agent="UA/1")


def seed(form, count, ties_every=3):
    """Rows whose times repeat in runs, so the id tie-break is exercised."""
    return [add(form, i, at=BASE + timedelta(seconds=i // ties_every)) for i in range(count)]


def page(puller, form, **params):
    response = puller.get(LIST, {"formId": form.slug, **params})
    assert response.status_code == 200, response.content
    return response.json()


def walk(puller, form, **params):
    seen, cursor = [], None
    while True:
        body = page(puller, form, **params, **({"cursor": cursor} if cursor else {}))
        seen += [row["id"] for row in body["data"]]
        if not body["hasMore"]:
            assert body["nextCursor"] is None
            return seen
        cursor = body["nextCursor"]


def test_list_shape_and_defaults(puller, form):
    rows = seed(form, 30)

    body = page(puller, form)

    assert len(body["data"]) == 25
    assert body["hasMore"] is True
    assert isinstance(body["nextCursor"], str)
    newest = max(rows, key=lambda s: (s.submitted_at, str(s.pk)))
    assert body["data"][0] == {
        "id": str(newest.pk),
        "formId": str(form.pk),
        "submittedAt": iso(newest.submitted_at),
        "fields": dict(newest.data),
    }


def test_pull_never_shows_ip_user_agent_or_origin(puller, form):
    add(form, 1)

    text = puller.get(LIST, {"formId": form.slug}).content.decode()

    for secret in ("198.51.100.1", "UA/1", "site.example", "meta"):
        assert secret not in text


def test_last_page_has_no_cursor(puller, form):
    seed(form, 3)

    body = page(puller, form, limit=3)

    assert (body["hasMore"], body["nextCursor"], len(body["data"])) == (False, None, 3)


def test_form_by_id_or_slug(puller, form):
    add(form, 1)

    assert page(puller, form)["data"] == puller.get(LIST, {"formId": str(form.pk)}).json()["data"]


@pytest.mark.parametrize("order", ["desc", "asc"])
def test_cursor_walk_returns_every_row_once_in_order(puller, form, order):
    rows = seed(form, 53)
    expected = sorted(rows, key=lambda s: (s.submitted_at, str(s.pk)), reverse=order == "desc")

    seen = walk(puller, form, limit=10, order=order)

    assert seen == [str(s.pk) for s in expected]


@pytest.mark.parametrize("order", ["desc", "asc"])
def test_cursor_walk_over_times_stamped_by_the_database(puller, form, order):
    # Stamped by the database's own clock; on SQLite a stamp that ties within a millisecond is
    # moved past its folder's latest as it is stored, so the stored stamps are the expectation.
    rows = [add(form, i) for i in range(23)]
    for row in rows:
        row.refresh_from_db()
    expected = sorted(rows, key=lambda s: (s.submitted_at, str(s.pk)), reverse=order == "desc")

    seen = walk(puller, form, limit=4, order=order)

    assert seen == [str(s.pk) for s in expected]


@pytest.mark.parametrize("order", ["desc", "asc"])
def test_paging_while_submissions_arrive_skips_and_repeats_nothing(puller, form, order):
    original = {str(s.pk) for s in seed(form, 40)}
    arrived = set()
    seen, cursor = [], None
    while True:
        body = page(puller, form, limit=7, order=order, **({"cursor": cursor} if cursor else {}))
        seen += [row["id"] for row in body["data"]]
        for _ in range(3):  # new submissions land between every two pages
            arrived.add(str(add(form, "new").pk))
        if not body["hasMore"]:
            break
        cursor = body["nextCursor"]

    assert len(seen) == len(set(seen))
    assert original <= set(seen)
    if order == "desc":
        assert set(seen) == original
    else:
        assert set(seen) - original <= arrived


def test_since_is_inclusive(puller, form):
    rows = seed(form, 9)  # times: 0,0,0,1,1,1,2,2,2 seconds

    body = page(puller, form, since=iso(BASE + timedelta(seconds=1)), order="asc")

    assert [row["id"] for row in body["data"]] == [
        str(s.pk) for s in sorted(rows[3:], key=lambda s: (s.submitted_at, str(s.pk)))
    ]


@pytest.mark.parametrize(
    "since", ["2026-01-01T00:00:01+00:00", "2026-01-01T01:00:01+01:00", "2026-01-01T00:00:01"]
)
def test_since_accepts_offsets_and_naive_utc(puller, form, since):
    seed(form, 6)

    assert len(page(puller, form, since=since)["data"]) == 3


def test_documented_sync_pattern_loses_nothing(puller, form):
    store: dict[str, dict] = {}

    def sync(since):
        params = {"order": "asc", "limit": 100} | ({"since": since} if since else {})
        cursor = None
        while True:
            body = page(puller, form, **params, **({"cursor": cursor} if cursor else {}))
            for row in body["data"]:
                store[row["id"]] = row  # upsert by id
            if body["nextCursor"] is None:
                return max((row["submittedAt"] for row in store.values()), default=None)
            cursor = body["nextCursor"]

    seed(form, 150)
    newest = sync(None)
    for i in range(5):
        add(form, f"late-{i}")
    newest = sync(newest)
    add(form, "later")
    sync(newest)

    assert set(store) == {str(pk) for pk in Submission.objects.values_list("pk", flat=True)}
    assert len(store) == 156


def test_fields_parameter_keeps_only_named_fields(puller, form):
    submission = add(form, 7)

    listed = page(puller, form, fields="email, missing")["data"][0]
    single = puller.get(f"{LIST}/{submission.pk}", {"fields": "n"}).json()["data"]

    assert listed["fields"] == {"email": "7@example.com"}
    assert single["fields"] == {"n": 7}


@pytest.mark.parametrize("path", [LIST, f"{LIST}/stream"])
def test_a_field_name_with_a_nul_is_a_400(puller, form, path):
    add(form, 1)

    response = puller.get(path, {"formId": str(form.pk), "fields": "a\x00b"})

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_parameter"
    assert "fields" in response.json()["details"]


def test_detail_returns_one_submission(puller, form):
    submission = add(form, 3)

    response = puller.get(f"{LIST}/{submission.pk}")

    assert response.status_code == 200
    assert response.json() == {
        "data": {
            "id": str(submission.pk),
            "formId": str(form.pk),
            "submittedAt": iso(submission.submitted_at),
            "fields": {"n": 3, "email": "3@example.com"},
        }
    }


def test_detail_of_unreadable_or_missing_submission_is_404(puller, form, user):
    hidden = add(form_create(owner=user, name="Not granted"), 1)

    for ident in (hidden.pk, "00000000-0000-0000-0000-000000000000", "garbage"):
        response = puller.get(f"{LIST}/{ident}")
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"


def test_forms_outside_the_key_are_404(puller, form, user, other_user):
    mine_not_granted = form_create(owner=user, name="Not granted")
    theirs = form_create(owner=other_user, name="Theirs")

    for ident in (mine_not_granted.slug, str(theirs.pk), "no-such-form"):
        response = puller.get(LIST, {"formId": ident})
        assert response.status_code == 404
        assert response.json()["error"] == "form_not_found"


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({}, "formId"),
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"order": "newest"}, "order"),
        ({"since": "yesterday"}, "since"),
        ({"fields": " , "}, "fields"),
        ({"cursor": "not-a-cursor"}, "cursor"),
    ],
)
def test_bad_parameters_are_400_with_details(puller, form, params, name):
    query = ({"formId": form.slug} if name != "formId" else {}) | params

    response = puller.get(LIST, query)

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_parameter"
    assert name in body["details"]


def test_tampered_cursor_is_400(puller, form):
    seed(form, 5)
    cursor = page(puller, form, limit=2)["nextCursor"]
    tampered = cursor[:-3] + ("AAA" if not cursor.endswith("AAA") else "BBB")

    response = puller.get(LIST, {"formId": form.slug, "cursor": tampered})

    assert response.status_code == 400
    assert "cursor" in response.json()["details"]


def test_cursor_from_another_form_or_order_is_400(puller, form, user):
    other = form_create(owner=user, name="Other")
    ApiKey.objects.get().forms.add(other)
    seed(form, 5)
    cursor = page(puller, form, limit=2)["nextCursor"]

    other_form = puller.get(LIST, {"formId": other.slug, "cursor": cursor})
    other_order = puller.get(LIST, {"formId": form.slug, "cursor": cursor, "order": "asc"})

    assert other_form.status_code == other_order.status_code == 400
    assert "cursor" in other_form.json()["details"]


def test_cursor_works_with_slug_or_id(puller, form):
    seed(form, 5)
    cursor = page(puller, form, limit=2)["nextCursor"]

    response = puller.get(LIST, {"formId": str(form.pk), "cursor": cursor, "limit": 2})

    assert response.status_code == 200


# --- Authentication ---------------------------------------------------------------------


def test_missing_key_is_401(api, form):
    response = api.get(LIST, {"formId": form.slug})

    assert response.status_code == 401
    assert response.json()["error"] == "not_authenticated"
    assert "X-RateLimit-Limit" not in response


@pytest.mark.parametrize(
    "header",
    ["Bearer ff_live_" + "0" * 38, "Basic abc", "Bearer", "ff_live_abc"],
    ids=["bad-checksum", "basic", "empty", "no-scheme"],
)
def test_malformed_keys_are_401(api, form, header):
    assert api.get(LIST, {"formId": form.slug}, HTTP_AUTHORIZATION=header).status_code == 401


def test_dashboard_jwt_is_401_here(api, form, user):
    response = api.get(LIST, {"formId": form.slug}, HTTP_AUTHORIZATION=f"Bearer {token_for(user)}")

    assert response.status_code == 401


def test_revoked_key_is_refused_on_the_very_next_request(puller, owner_api, form):
    assert puller.get(LIST, {"formId": form.slug}).status_code == 200

    owner_api.delete(f"/api/v1/api-keys/{ApiKey.objects.get().pk}")

    assert puller.get(LIST, {"formId": form.slug}).status_code == 401


def test_key_of_deactivated_owner_is_401(puller, form, user):
    User.objects.filter(pk=user.pk).update(is_active=False)

    assert puller.get(LIST, {"formId": form.slug}).status_code == 401


# --- Rate limit, CORS, quota ------------------------------------------------------------


def test_rate_limit_headers_on_every_response(puller, form):
    first = puller.get(LIST, {"formId": form.slug})
    bad = puller.get(LIST, {"formId": form.slug, "limit": 0})
    missing = puller.get(f"{LIST}/garbage")

    assert first["X-RateLimit-Limit"] == "60"
    assert first["X-RateLimit-Remaining"] == "59"
    assert bad["X-RateLimit-Remaining"] == "58"
    assert missing["X-RateLimit-Remaining"] == "57"
    reset = int(first["X-RateLimit-Reset"])
    # Against the rate windows' own clock, which the tests hold still: real time may have
    # crossed the window's end since the test began.
    now = ratelimit.now()
    assert now < reset <= now + 61


def test_61st_request_in_a_minute_is_429(puller, form):
    for _ in range(60):
        assert puller.get(LIST, {"formId": form.slug}).status_code == 200

    response = puller.get(LIST, {"formId": form.slug})

    assert response.status_code == 429
    assert response.json()["error"] == "rate_limited"
    assert 1 <= int(response["Retry-After"]) <= 60
    assert response["X-RateLimit-Remaining"] == "0"


def test_rate_limit_is_per_key(puller, api, form, user):
    for _ in range(60):
        puller.get(LIST, {"formId": form.slug})
    second_key = create_key(user, [form], name="second")

    response = api.get(LIST, {"formId": form.slug}, HTTP_AUTHORIZATION=f"Bearer {second_key}")

    assert response.status_code == 200


def test_no_cors_headers_even_for_preflight(puller, form):
    origin = {"HTTP_ORIGIN": "https://browser.example"}
    responses = [
        puller.get(LIST, {"formId": form.slug}, **origin),
        puller.options(LIST, HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET", **origin),
        puller.get(LIST, {"formId": "nope"}, **origin),
    ]

    for response in responses:
        assert not [h for h in response.headers if h.lower().startswith("access-control-")]


def test_pulls_do_not_count_toward_monthly_limit(puller, form, user):
    add(form, 1)
    user.refresh_from_db()
    before = user.monthly_submission_count

    for _ in range(5):
        puller.get(LIST, {"formId": form.slug})

    user.refresh_from_db()
    assert user.monthly_submission_count == before == 1


def test_last_used_is_written_at_most_once_a_minute(puller, form):
    puller.get(LIST, {"formId": form.slug})
    api_key = ApiKey.objects.get()
    assert api_key.last_used_at is not None
    ApiKey.objects.update(last_used_at=None)

    puller.get(LIST, {"formId": form.slug})

    assert ApiKey.objects.get().last_used_at is None


def test_list_costs_a_fixed_number_of_queries(puller, form, django_assert_num_queries):
    seed(form, 50)
    puller.get(LIST, {"formId": form.slug})

    # key, form, the feed's look for rows to place (none: submissions/feed/), page
    with django_assert_num_queries(4):
        puller.get(LIST, {"formId": form.slug, "limit": 100})
