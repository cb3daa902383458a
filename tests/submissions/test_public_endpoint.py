import uuid
from datetime import date

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import MULTIPART_CONTENT, encode_multipart

from accounts.models import UsageShard, User
from submissions.models import Submission
from tests.conftest import BROWSER_ACCEPT, post_html_form, submit
from tests.fakes import FakeServer, Reply

# With Formspree's keys beside the contract's (tests/submissions/test_dropin_dialect.py).
SUCCESS = {"success": True, "message": "Thanks! Your submission was received.", "ok": True,
           "next": "http://localhost:8000/thanks"}


def stored_fields():
    return [dict(s.data) for s in Submission.objects.order_by("submitted_at")]


def usage(user):
    user.refresh_from_db()
    return user.monthly_submission_count


# --- Response modes ---------------------------------------------------------------------


def test_json_submission_is_stored_in_order_with_meta(public, form, user):
    data = {"zeta": "last letter", "alpha": "first letter", "mid": 3}

    response = submit(
        public, form, data, HTTP_USER_AGENT="Tester/1.0", HTTP_ORIGIN="https://site.example"
    )

    assert response.status_code == 200
    submission = Submission.objects.get()
    assert response.json() == {**SUCCESS, "id": str(submission.pk)}
    assert submission.data == [["zeta", "last letter"], ["alpha", "first letter"], ["mid", 3]]
    assert list(submission.fields) == ["zeta", "alpha", "mid"]
    assert submission.ip == "127.0.0.1"
    assert submission.user_agent == "Tester/1.0"
    assert submission.origin == "https://site.example"
    assert usage(user) == 1


@pytest.mark.parametrize("html", [False, True])
def test_answers_carry_the_security_headers_and_no_cookie(public, form, html):
    """The endpoint skips the session, CSRF and messages middleware, not the security ones."""
    response = post_html_form(public, form) if html else submit(public, form)

    assert response.status_code == (303 if html else 200)
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Content-Length"] == str(len(response.content))
    assert not response.cookies
    assert "Cookie" not in response.get("Vary", "")


def test_a_path_below_a_form_is_not_the_endpoint(public, form):
    response = public.post(f"/api/v1/f/{form.slug}/extra", {"name": "x"}, format="json")

    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    assert Submission.objects.count() == 0


def test_html_form_post_redirects_to_thank_you_page(public, form, client):
    response = post_html_form(public, form)

    assert response.status_code == 303
    assert response["Location"] == "/thanks"
    assert client.get("/thanks").status_code == 200
    assert stored_fields() == [{"name": "Ada"}]


def test_html_form_post_redirects_to_form_redirect_url(public, form):
    form.redirect_url = "https://site.example/thanks"
    form.save()

    response = post_html_form(public, form)

    assert response.status_code == 303
    assert response["Location"] == "https://site.example/thanks"


@pytest.mark.parametrize("accept", ["*/*", None])
def test_urlencoded_post_without_json_accept_is_html_mode(public, form, accept):
    extra = {"HTTP_ACCEPT": accept} if accept else {}
    body = "name=Ada"

    response = public.post(
        f"/api/v1/f/{form.slug}", body, content_type="application/x-www-form-urlencoded", **extra
    )

    assert response.status_code == 303


def test_urlencoded_post_preferring_json_gets_json(public, form):
    response = post_html_form(public, form, HTTP_ACCEPT="application/json")

    assert response.status_code == 200
    assert response.json() == {**SUCCESS, "id": str(Submission.objects.get().pk)}


def test_repeated_fields_become_lists_in_place(public, form):
    body = "topic=a&name=Ada&topic=b&topic=c"

    public.post(f"/api/v1/f/{form.slug}", body, content_type="application/x-www-form-urlencoded")

    assert Submission.objects.get().data == [["topic", ["a", "b", "c"]], ["name", "Ada"]]


# --- Files ------------------------------------------------------------------------------

SECRET_BYTES = b"TOP-SECRET-FILE-CONTENT-"


def test_file_becomes_placeholder_in_submitted_order(public, form, settings, tmp_path):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    data = {
        "before": "1",
        "cv": SimpleUploadedFile("my cv.pdf", SECRET_BYTES * 1000, "application/pdf"),
        "after": "2",
    }

    response = post_html_form(public, form, data, HTTP_ACCEPT="application/json")

    assert response.status_code == 200
    submission = Submission.objects.get()
    assert submission.data == [
        ["before", "1"],
        ["cv", f"[File: my cv.pdf, {len(SECRET_BYTES) * 1000} bytes]"],
        ["after", "2"],
    ]
    assert list(tmp_path.iterdir()) == []


def test_large_file_is_counted_not_kept(public, form, settings, tmp_path):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    size = 6 * 1024 * 1024 + 7  # well past Django's in-memory threshold
    upload = SimpleUploadedFile("big.bin", SECRET_BYTES + b"\0" * (size - len(SECRET_BYTES)))

    response = post_html_form(public, form, {"file": upload}, HTTP_ACCEPT="application/json")

    assert response.status_code == 200
    assert Submission.objects.get().data == [["file", f"[File: big.bin, {size} bytes]"]]
    assert list(tmp_path.iterdir()) == []
    row = Submission.objects.values_list("data", "user_agent", "origin").get()
    assert SECRET_BYTES.decode() not in repr(row)


def test_repeated_file_fields_become_a_list(public, form):
    files = [SimpleUploadedFile("a.txt", b"abc"), SimpleUploadedFile("b.txt", b"de")]

    post_html_form(public, form, {"docs": files}, HTTP_ACCEPT="application/json")

    assert Submission.objects.get().data == [
        ["docs", ["[File: a.txt, 3 bytes]", "[File: b.txt, 2 bytes]"]]
    ]


# --- Checks, in order -------------------------------------------------------------------


def test_a_deactivated_owners_form_is_404_and_stores_nothing(public, form):
    form.owner.is_active = False
    form.owner.save()

    response = public.post(f"/api/v1/f/{form.slug}", {"a": 1}, format="json")

    assert response.status_code == 404
    assert response.json()["error"] == "form_not_found"
    assert not form.submissions.exists()


def test_unknown_slug_is_404_in_both_modes(public, db):
    as_json = public.post("/api/v1/f/nope", {"a": 1}, format="json")
    as_html = public.post("/api/v1/f/nope", {"a": "1"}, HTTP_ACCEPT=BROWSER_ACCEPT)

    assert as_json.status_code == as_html.status_code == 404
    assert as_json.json() == {
        "success": False,
        "error": "form_not_found",
        "message": "There is no form at this address.",
        "errors": [{"code": "FORM_NOT_FOUND", "message": "There is no form at this address."}],
    }
    assert as_html["Content-Type"].startswith("text/html")
    assert b"There is no form at this address." in as_html.content


@pytest.fixture
def guarded_form(form):
    form.allowed_origins = ["https://site.example"]
    form.save()
    return form


def test_allowed_origin_is_accepted_with_cors_header(public, guarded_form):
    response = submit(public, guarded_form, HTTP_ORIGIN="https://site.example")

    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "https://site.example"


def test_referer_is_used_when_origin_is_missing(public, guarded_form):
    response = submit(public, guarded_form, HTTP_REFERER="https://site.example/contact?x=1")

    assert response.status_code == 200


@pytest.mark.parametrize(
    "headers",
    [{"HTTP_ORIGIN": "https://evil.example"}, {"HTTP_REFERER": "https://evil.example/"}, {}],
    ids=["other-origin", "other-referer", "none"],
)
def test_other_origins_are_403_and_not_stored(public, guarded_form, user, headers):
    response = submit(public, guarded_form, **headers)

    assert response.status_code == 403
    assert response.json()["error"] == "origin_not_allowed"
    assert "Access-Control-Allow-Origin" not in response
    assert not Submission.objects.exists()
    assert usage(user) == 0


def test_any_origin_when_list_is_empty(public, form):
    response = submit(public, form, HTTP_ORIGIN="https://anything.example")

    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "https://anything.example"


def test_rate_limit_is_per_ip_per_form(public, form, user):
    from forms_app.services import form_create

    form.rate_limit = 2
    form.save()
    second_form = form_create(owner=user, name="Other")

    assert submit(public, form).status_code == 200
    assert submit(public, form).status_code == 200
    limited = submit(public, form, HTTP_ORIGIN="https://site.example")

    assert limited.status_code == 429
    assert limited.json()["error"] == "rate_limited"
    assert 1 <= int(limited["Retry-After"]) <= 60
    assert limited["Access-Control-Allow-Origin"] == "https://site.example"
    assert "Retry-After" in limited["Access-Control-Expose-Headers"]
    assert submit(public, form, REMOTE_ADDR="10.0.0.2").status_code == 200
    assert submit(public, second_form).status_code == 200
    assert Submission.objects.filter(form=form).count() == 3


def test_an_ipv6_client_is_counted_per_64_and_its_own_address_is_stored(public, form):
    # One client usually holds a whole /64; rotating through it must not reset the limit.
    form.rate_limit = 2
    form.save()

    assert submit(public, form, REMOTE_ADDR="2001:db8:1:2::1").status_code == 200
    assert submit(public, form, REMOTE_ADDR="2001:db8:1:2::ffff").status_code == 200
    assert submit(public, form, REMOTE_ADDR="2001:db8:1:2:abcd::9").status_code == 429
    assert submit(public, form, REMOTE_ADDR="2001:db8:1:3::1").status_code == 200

    stored = Submission.objects.values_list("ip", flat=True)
    assert sorted(stored) == ["2001:db8:1:2::1", "2001:db8:1:2::ffff", "2001:db8:1:3::1"]


def test_rate_limited_html_post_gets_html_page_with_retry_after(public, form):
    form.rate_limit = 1
    form.save()
    post_html_form(public, form)

    response = post_html_form(public, form)

    assert response.status_code == 429
    assert response["Content-Type"].startswith("text/html")
    assert int(response["Retry-After"]) >= 1


def test_forwarded_ip_is_used_behind_trusted_proxies(public, form, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    form.rate_limit = 1
    form.save()
    chain = {"HTTP_X_FORWARDED_FOR": "6.6.6.6, 203.0.113.9"}

    assert submit(public, form, **chain).status_code == 200
    assert submit(public, form, HTTP_X_FORWARDED_FOR="6.6.6.6, 198.51.100.1").status_code == 200
    assert submit(public, form, **chain).status_code == 429
    assert Submission.objects.order_by("submitted_at").first().ip == "203.0.113.9"


def test_forwarded_header_is_ignored_without_trusted_proxies(public, form):
    form.rate_limit = 1
    form.save()

    submit(public, form, HTTP_X_FORWARDED_FOR="1.1.1.1")

    assert submit(public, form, HTTP_X_FORWARDED_FOR="2.2.2.2").status_code == 429
    assert Submission.objects.get().ip == "127.0.0.1"


def test_monthly_limit_gives_403_and_stores_nothing(public, form, user):
    user.monthly_submission_limit = 2
    user.save()
    submit(public, form, {"name": "Ada", "n": "1"})
    submit(public, form, {"name": "Ada", "n": "2"})

    response = submit(public, form, {"name": "Ada", "n": "3"})

    assert response.status_code == 403
    assert response.json()["error"] == "monthly_limit_reached"
    assert Submission.objects.count() == 2
    assert usage(user) == 2


def test_monthly_limit_uses_default_setting(public, form, settings):
    settings.DEFAULT_MONTHLY_SUBMISSION_LIMIT = 1
    submit(public, form)

    assert submit(public, form).status_code == 403


def test_monthly_count_starts_over_in_a_new_month(public, form, user):
    User.objects.filter(pk=user.pk).update(monthly_submission_limit=1)
    UsageShard.objects.create(user=user, month=date(2000, 1, 1), shard=0, count=1)

    assert submit(public, form).status_code == 200
    assert usage(user) == 1
    assert submit(public, form).status_code == 403


def test_zero_limit_blocks_even_in_a_new_month(public, form, user):
    User.objects.filter(pk=user.pk).update(monthly_submission_limit=0)
    UsageShard.objects.create(user=user, month=date(2000, 1, 1), shard=0, count=0)

    assert submit(public, form).status_code == 403


def oversized_multipart(size=10 * 1024 * 1024 + 1):
    return encode_multipart("BoUnDaRy", {"file": SimpleUploadedFile("big", b"x" * size)})


def test_body_over_10_mib_is_413(public, form, user):
    body = oversized_multipart()

    response = public.post(
        f"/api/v1/f/{form.slug}",
        body,
        content_type="multipart/form-data; boundary=BoUnDaRy",
        HTTP_ACCEPT="application/json",
    )

    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"
    assert not Submission.objects.exists()
    assert usage(user) == 0


def test_json_body_over_10_mib_is_413(public, form):
    body = '{"a": "' + "x" * (10 * 1024 * 1024) + '"}'

    response = public.post(f"/api/v1/f/{form.slug}", body, content_type="application/json")

    assert response.status_code == 413


def test_more_than_200_fields_is_413(public, form):
    response = submit(public, form, {f"f{i}": "x" for i in range(201)})

    assert response.status_code == 413
    assert response.json()["error"] == "too_many_fields"


def test_exactly_200_fields_is_accepted(public, form):
    assert submit(public, form, {f"f{i}": "x" for i in range(200)}).status_code == 200


def test_monthly_limit_is_checked_before_size(public, form, user):
    user.monthly_submission_limit = 0
    user.save()

    response = public.post(
        f"/api/v1/f/{form.slug}",
        oversized_multipart(),
        content_type="multipart/form-data; boundary=BoUnDaRy",
        HTTP_ACCEPT="application/json",
    )

    assert response.status_code == 403


def test_origin_is_checked_before_rate_limit(public, guarded_form):
    guarded_form.rate_limit = 1
    guarded_form.save()
    submit(public, guarded_form, HTTP_ORIGIN="https://evil.example")
    submit(public, guarded_form, HTTP_ORIGIN="https://evil.example")

    assert submit(public, guarded_form, HTTP_ORIGIN="https://site.example").status_code == 200


# --- Bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "error"),
    [("{broken", "malformed_body"), ("[1, 2]", "malformed_body"), ("{}", "empty_submission")],
)
def test_bad_json_bodies_are_400(public, form, user, body, error):
    response = public.post(f"/api/v1/f/{form.slug}", body, content_type="application/json")

    assert response.status_code == 400
    message = response.json()["message"]
    assert response.json() == {
        "success": False,
        "error": error,
        "message": message,
        "errors": [{"code": "EMPTY" if error == "empty_submission" else "UNSPECIFIED",
                    "message": message}],
    }
    assert usage(user) == 0


def test_unsupported_content_type_is_415(public, form):
    response = public.post(
        f"/api/v1/f/{form.slug}", "hi", content_type="text/plain", HTTP_ACCEPT="application/json"
    )

    assert response.status_code == 415
    assert response.json()["success"] is False


def test_get_is_405_json(public, form):
    response = public.get(f"/api/v1/f/{form.slug}")

    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"


# --- CORS preflight ---------------------------------------------------------------------


def test_preflight_allows_the_form_origin(public, guarded_form):
    response = public.options(
        f"/api/v1/f/{guarded_form.slug}",
        HTTP_ORIGIN="https://site.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type",
    )

    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == "https://site.example"
    assert "POST" in response["Access-Control-Allow-Methods"]
    assert response["Access-Control-Allow-Headers"] == "content-type"


def test_preflight_from_other_origin_gets_no_allow_header(public, guarded_form):
    response = public.options(
        f"/api/v1/f/{guarded_form.slug}",
        HTTP_ORIGIN="https://evil.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
    )

    assert "Access-Control-Allow-Origin" not in response


# --- Honeypot ---------------------------------------------------------------------------


@pytest.fixture
def honeypot_form(form):
    form.honeypot_field = "_gotcha"
    form.save()
    return form


def test_filled_honeypot_looks_like_success_but_keeps_nothing(public, honeypot_form, user):
    response = submit(public, honeypot_form, {"name": "Bot", "_gotcha": "spam"})
    again = submit(public, honeypot_form, {"name": "Bot", "_gotcha": "spam"})

    assert response.status_code == 200
    body = response.json()
    assert body == {**SUCCESS, "id": body["id"]}  # an id like any other, never stored
    assert uuid.UUID(body["id"]).version == 4
    assert again.json()["id"] != body["id"]
    assert not Submission.objects.exists()
    assert usage(user) == 0


def test_filled_honeypot_html_post_still_redirects(public, honeypot_form):
    response = post_html_form(public, honeypot_form, {"name": "Bot", "_gotcha": "spam"})

    assert response.status_code == 303
    assert not Submission.objects.exists()


def test_empty_honeypot_is_stored_without_the_trap_field(public, honeypot_form):
    submit(public, honeypot_form, {"name": "Ada", "_gotcha": ""})

    assert stored_fields() == [{"name": "Ada"}]


# --- CAPTCHA ----------------------------------------------------------------------------


@pytest.fixture
def captcha_form(form):
    form.set_recaptcha_secret("server-secret")
    form.save()
    return form


@pytest.fixture
def recaptcha(settings):
    def answer(request):
        fields = dict(pair.split("=") for pair in request.body.decode().split("&"))
        ok = fields.get("response") == "good-token" and fields.get("secret") == "server-secret"
        return Reply(body={"success": ok})

    with FakeServer(answer) as server:
        settings.RECAPTCHA_VERIFY_URL = f"{server.url}/siteverify"
        yield server


def test_valid_captcha_is_stored_without_its_token(public, captcha_form, recaptcha):
    response = submit(public, captcha_form, {"name": "Ada", "g-recaptcha-response": "good-token"})

    assert response.status_code == 200
    assert stored_fields() == [{"name": "Ada"}]
    assert len(recaptcha.requests) == 1


@pytest.mark.parametrize("token", ["bad-token", None])
def test_failed_or_missing_captcha_is_422(public, captcha_form, recaptcha, user, token):
    data = {"name": "Ada"} | ({"g-recaptcha-response": token} if token else {})

    response = submit(public, captcha_form, data)

    assert response.status_code == 422
    assert response.json()["error"] == "captcha_failed"
    assert not Submission.objects.exists()
    assert usage(user) == 0


def test_unreachable_captcha_service_is_422(public, captcha_form, settings):
    settings.RECAPTCHA_VERIFY_URL = "http://127.0.0.1:9/siteverify"

    response = submit(public, captcha_form, {"name": "A", "g-recaptcha-response": "good-token"})

    assert response.status_code == 422


def test_size_is_checked_before_captcha(public, captcha_form, recaptcha):
    response = public.post(
        f"/api/v1/f/{captcha_form.slug}",
        oversized_multipart(),
        content_type=MULTIPART_CONTENT.replace("BoUnDaRyStRiNg", "BoUnDaRy"),
        HTTP_ACCEPT="application/json",
    )

    assert response.status_code == 413
    assert recaptcha.requests == []


# --- Hot path ---------------------------------------------------------------------------


def queries_per_submission() -> int:
    """With Redis the rate limit and quota take no query (one Redis round trip); without it,
    the quota is checked before the body is read and again inside the transaction."""
    from django.conf import settings
    from django.db import connection

    # form+owner, savepoint, insert, deliveries (one INSERT ... SELECT), usage shard, release
    redis_path = 6
    if settings.REDIS_URL:
        return redis_path
    # + the two quota sums, and on PostgreSQL the owner's row lock (SQLite has one writer)
    return redis_path + 2 + (connection.vendor == "postgresql")


def test_submission_uses_a_fixed_number_of_queries(public, form, django_assert_num_queries):
    # Warm-up: content types, caches, and the field names, which the form records only the
    # first time it sees them.
    submit(public, form, {"name": "Ada", "email": "a@example.com"})
    form.refresh_from_db()

    with django_assert_num_queries(queries_per_submission()):
        assert submit(public, form, {"name": "Grace", "email": "g@example.com"}).status_code == 200


def test_deliveries_cost_the_same_query_however_many_integrations(
    public, form, user, settings, django_assert_num_queries
):
    from integrations.models import Delivery
    from integrations.services import integration_create

    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    settings.CELERY_TASK_ALWAYS_EAGER = False  # count the request, not the deliveries
    for port in (1, 2, 3):
        integration_create(owner=user, type="WEBHOOK", config={"url": f"http://127.0.0.1:{port}/"})
    submit(public, form, {"name": "Ada", "n": "1"})

    with django_assert_num_queries(queries_per_submission()):
        assert submit(public, form, {"name": "Ada", "n": "2"}).status_code == 200
    assert Delivery.objects.count() == 6


# --- Script clients: fetch() without a Content-Type, and 415s a script can read -------------


def test_a_text_plain_body_holding_a_json_object_is_taken_as_json(public, form, user):
    response = public.post(
        f"/api/v1/f/{form.slug}", '{"email": "ada@example.com", "tags": ["a", "b"]}',
        content_type="text/plain;charset=UTF-8", HTTP_ACCEPT="*/*",
    )

    assert response.status_code == 200
    submission = Submission.objects.get()
    assert response.json() == {**SUCCESS, "id": str(submission.pk)}
    assert submission.data == [["email", "ada@example.com"], ["tags", ["a", "b"]]]
    assert usage(user) == 1


def test_a_text_plain_json_body_with_a_bad_field_is_answered_in_json(public, form):
    response = public.post(f"/api/v1/f/{form.slug}", "{}", content_type="text/plain",
                           HTTP_ACCEPT="*/*")

    assert response.status_code == 400
    assert response.json()["error"] == "empty_submission"


def test_a_text_plain_body_that_is_not_a_json_object_is_415(public, form):
    response = public.post(f"/api/v1/f/{form.slug}", "[1, 2]", content_type="text/plain",
                           HTTP_ACCEPT="application/json")

    assert response.status_code == 415
    assert response.json() == {
        "success": False,
        "error": "unsupported_media_type",
        "message": "Send JSON, application/x-www-form-urlencoded or multipart/form-data.",
        "errors": [{"code": "UNSPECIFIED", "message": (
            "Send JSON, application/x-www-form-urlencoded or multipart/form-data.")}],
    }


@pytest.mark.parametrize("headers", [
    {"HTTP_SEC_FETCH_MODE": "cors", "HTTP_ACCEPT": "*/*"},
    {"HTTP_ORIGIN": "https://site.example", "HTTP_ACCEPT": "*/*"},
    {"HTTP_ORIGIN": "https://site.example", "HTTP_SEC_FETCH_MODE": "no-cors",
     "HTTP_ACCEPT": "*/*"},
])
def test_a_415_to_a_script_is_json_with_cors(public, form, headers):
    response = public.post(f"/api/v1/f/{form.slug}", "name=Ada", content_type="text/plain",
                           **headers)

    assert response.status_code == 415
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == "unsupported_media_type"
    if "HTTP_ORIGIN" in headers:
        assert response["Access-Control-Allow-Origin"] == "https://site.example"


def test_a_text_plain_html_form_post_gets_a_415_page(public, form):
    response = public.post(
        f"/api/v1/f/{form.slug}", "name=Ada\r\n", content_type="text/plain",
        HTTP_ACCEPT=BROWSER_ACCEPT, HTTP_ORIGIN="https://site.example",
        HTTP_SEC_FETCH_MODE="navigate",
    )

    assert response.status_code == 415
    assert response["Content-Type"].startswith("text/html")


def test_an_html_form_post_from_an_older_browser_with_an_origin_is_redirected(public, form):
    response = public.post(f"/api/v1/f/{form.slug}", {"name": "Ada"},
                           HTTP_ACCEPT=BROWSER_ACCEPT, HTTP_ORIGIN="https://site.example")

    assert response.status_code == 303


def test_the_endpoint_has_one_door_and_its_url_pattern_never_serves(rf, settings):
    """PublicEndpointMiddleware serves every request to the endpoint; the URL pattern is kept
    for reverse() and the schema only, and its view refuses to serve (an error, logged)."""
    from django.urls import resolve, reverse

    from submissions.intake.views import SubmitView

    assert "submissions.intake.middleware.PublicEndpointMiddleware" in settings.MIDDLEWARE
    assert reverse("submit", kwargs={"slug": "abc"}) == "/api/v1/f/abc"
    assert resolve("/api/v1/f/abc").func.view_class is SubmitView
    assert SubmitView.as_view()(rf.post("/api/v1/f/abc"), slug="abc").status_code == 500
