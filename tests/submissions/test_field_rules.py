"""Submissions checked against their form's field rules (contract, "Field rules"), over HTTP
to the public endpoint: each type taken and refused, the 422's JSON and HTML answers, and a
refused submission that stores, counts and delivers nothing."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from accounts.models import User
from forms_app.services import form_update
from integrations.models import Delivery
from submissions.models import Submission
from tests.conftest import post_html_form, submit


def usage(user):
    user.refresh_from_db()
    return user.monthly_submission_count


def ruled(form, *rules, allow_extra=True):
    return form_update(form=form, field_rules=[{"required": False} | rule for rule in rules],
                       allow_extra_fields=allow_extra)


def refused(response):
    """The one problem of a 422, as (field, code)."""
    assert response.status_code == 422, response.content
    (error,) = response.json()["errors"]
    return error["field"], error["code"]


# --- Each type, taken and refused -------------------------------------------------------

TAKEN = [
    ({"type": "text"}, "Hello"),
    ({"type": "text", "maxLength": 5}, "12345"),
    ({"type": "email"}, "ada@example.com"),
    ({"type": "email", "maxLength": 15}, "ada@example.com"),
    ({"type": "number"}, 42),
    ({"type": "number"}, "-2.5"),
    ({"type": "number"}, "1e3"),
    ({"type": "number", "min": 18, "max": 120}, "18"),
    ({"type": "number", "min": 18, "max": 120}, 120),
    ({"type": "number", "min": 0.5}, 0.5),
    ({"type": "url"}, "https://example.com/a?b=c"),
    ({"type": "url"}, "http://localhost:8000"),
    ({"type": "tel"}, "+44 (0)20 7946-0958"),
    ({"type": "date"}, "2026-11-28"),
    ({"type": "date", "min": "2026-01-01", "max": "2026-12-31"}, "2026-12-31"),
    ({"type": "checkbox"}, "on"),
    ({"type": "checkbox"}, True),
    ({"type": "checkbox"}, ["news", "offers"]),
    ({"type": "select", "options": ["S", "M", "L"]}, "M"),
    ({"type": "select", "options": ["S", "M", "L"]}, ["S", "L"]),
]


@pytest.mark.parametrize(("rule", "value"), TAKEN, ids=[f"{r['type']}-{v!r}" for r, v in TAKEN])
def test_a_value_that_keeps_the_rule_is_stored(public, form, rule, value):
    ruled(form, {"name": "f", **rule})

    response = submit(public, form, {"f": value})

    assert response.status_code == 200, response.content
    assert Submission.objects.get().data == [["f", value]]


REFUSED = [
    ({"type": "text"}, 42, "TYPE_TEXT"),
    ({"type": "text"}, {"nested": "object"}, "TYPE_TEXT"),
    ({"type": "text", "maxLength": 5}, "123456", "TYPE_TEXT"),
    ({"type": "email"}, "ada@", "TYPE_EMAIL"),
    ({"type": "email"}, "Ada <ada@example.com>", "TYPE_EMAIL"),
    ({"type": "email"}, ["a@example.com", "b@example.com"], "TYPE_EMAIL"),
    ({"type": "email", "maxLength": 10}, "ada@example.com", "TYPE_TEXT"),
    ({"type": "number"}, "forty-two", "TYPE_NUMERIC"),
    ({"type": "number"}, "NaN", "TYPE_NUMERIC"),
    ({"type": "number"}, "Infinity", "TYPE_NUMERIC"),
    ({"type": "number"}, "0x10", "TYPE_NUMERIC"),
    ({"type": "number"}, True, "TYPE_NUMERIC"),
    ({"type": "number"}, "9" * 101, "TYPE_NUMERIC"),
    ({"type": "number", "min": 18}, "17.999", "TYPE_NUMERIC"),
    ({"type": "number", "max": 120}, 120.0001, "TYPE_NUMERIC"),
    ({"type": "number", "max": 1}, "1e999999", "TYPE_NUMERIC"),
    ({"type": "url"}, "example.com", "UNSPECIFIED"),
    ({"type": "url"}, "javascript:alert(1)", "UNSPECIFIED"),
    ({"type": "url"}, "https://exa mple.com", "UNSPECIFIED"),
    ({"type": "url"}, "http://[::1", "UNSPECIFIED"),
    ({"type": "tel"}, "call me", "UNSPECIFIED"),
    ({"type": "tel"}, "12", "UNSPECIFIED"),
    ({"type": "date"}, "28/11/2026", "UNSPECIFIED"),
    ({"type": "date"}, "2026-02-30", "UNSPECIFIED"),
    ({"type": "date"}, "\uff12\uff10\uff12\uff16-11-28", "UNSPECIFIED"),
    ({"type": "date", "min": "2026-01-01"}, "2025-12-31", "UNSPECIFIED"),
    ({"type": "date", "max": "2026-12-31"}, "2027-01-01", "UNSPECIFIED"),
    ({"type": "checkbox"}, 1, "UNSPECIFIED"),
    ({"type": "checkbox"}, {"a": 1}, "UNSPECIFIED"),
    ({"type": "select", "options": ["S", "M", "L"]}, "XL", "UNSPECIFIED"),
    ({"type": "select", "options": ["S", "M", "L"]}, ["S", "XL"], "UNSPECIFIED"),
    ({"type": "select", "options": ["1", "2"]}, 1, "UNSPECIFIED"),
    ({"type": "file"}, "[File: cv.pdf, 10 bytes]", "UNSPECIFIED"),
]


@pytest.mark.parametrize(("rule", "value", "code"), REFUSED,
                         ids=[f"{r['type']}-{v!r}"[:60] for r, v, _ in REFUSED])
def test_a_value_that_breaks_the_rule_is_422_with_its_code(public, form, user, rule, value, code):
    ruled(form, {"name": "f", **rule})

    response = submit(public, form, {"f": value, "other": "kept?"})

    assert refused(response) == ("f", code)
    assert not Submission.objects.exists()
    assert usage(user) == 0


def test_the_422_answer_in_full(public, form):
    ruled(form, {"name": "email", "type": "email", "required": True},
          {"name": "age", "type": "number", "min": 18},
          {"name": "message", "type": "text", "required": True, "maxLength": 10},
          {"name": "size", "type": "select", "options": ["S", "M"]}, allow_extra=False)

    response = submit(public, form, {"age": "12", "message": "   ", "size": "XL", "junk": "x"})

    assert response.status_code == 422
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "success": False,
        "error": "invalid_fields",
        "message": "Some fields are missing or not filled in correctly.",
        "details": {
            "email": "“email” is required.",
            "age": "“age” must be 18 or more.",
            "message": "Please fill in “message”.",
            "size": "“size” must be one of: S, M.",
            "junk": "This form does not take a field named “junk”.",
        },
        "errors": [
            {"field": "email", "code": "REQUIRED_FIELD_MISSING",
             "message": "“email” is required."},
            {"field": "age", "code": "TYPE_NUMERIC", "message": "“age” must be 18 or more."},
            {"field": "message", "code": "REQUIRED_FIELD_EMPTY",
             "message": "Please fill in “message”."},
            {"field": "size", "code": "UNSPECIFIED", "message": "“size” must be one of: S, M."},
            {"field": "junk", "code": "UNEXPECTED_FIELD",
             "message": "This form does not take a field named “junk”."},
        ],
    }


@pytest.mark.parametrize(("value", "code"), [
    (None, "REQUIRED_FIELD_MISSING"), ("", "REQUIRED_FIELD_EMPTY"),
    (" \t", "REQUIRED_FIELD_EMPTY"), (None, "REQUIRED_FIELD_EMPTY"), ([], "REQUIRED_FIELD_EMPTY"),
])
def test_a_required_field_absent_or_blank(public, form, value, code):
    ruled(form, {"name": "name", "type": "text", "required": True})
    data = {"other": "x"} if code == "REQUIRED_FIELD_MISSING" else {"name": value, "other": "x"}

    assert refused(submit(public, form, data)) == ("name", code)


def test_an_unticked_required_checkbox_is_empty(public, form):
    ruled(form, {"name": "agree", "type": "checkbox", "required": True})

    assert refused(submit(public, form, {"agree": False, "x": "1"})) == (
        "agree", "REQUIRED_FIELD_EMPTY")
    assert refused(submit(public, form, {"x": "1"})) == ("agree", "REQUIRED_FIELD_MISSING")


def test_an_optional_field_may_be_left_out_or_blank(public, form):
    ruled(form, {"name": "age", "type": "number", "min": 18},
          {"name": "site", "type": "url"})

    assert submit(public, form, {"name": "Ada"}).status_code == 200
    assert submit(public, form, {"name": "Bo", "age": "", "site": " "}).status_code == 200
    assert Submission.objects.count() == 2


def test_a_value_is_stored_as_sent_not_as_checked(public, form):
    ruled(form, {"name": "email", "type": "email"}, {"name": "n", "type": "number"})

    submit(public, form, {"email": " ada@example.com ", "n": " 007 "})

    assert Submission.objects.get().data == [["email", " ada@example.com "], ["n", " 007 "]]


# --- Extras ------------------------------------------------------------------------------

def test_extra_fields_are_taken_by_default(public, form):
    ruled(form, {"name": "email", "type": "email"})

    assert submit(public, form, {"email": "a@example.com", "note": "hi"}).status_code == 200


def test_extra_fields_are_refused_when_not_allowed(public, form):
    ruled(form, {"name": "email", "type": "email"}, allow_extra=False)

    response = submit(public, form, {"email": "a@example.com", "note": "hi"})

    assert refused(response) == ("note", "UNEXPECTED_FIELD")


def test_the_honeypot_and_captcha_token_are_not_extras(public, form):
    ruled(form, {"name": "email", "type": "email"}, allow_extra=False)
    form_update(form=form, honeypot_field="website")

    response = submit(public, form, {"email": "a@example.com", "website": ""})

    assert response.status_code == 200
    assert Submission.objects.get().data == [["email", "a@example.com"]]


def test_without_rules_extras_mean_nothing(public, form):
    form_update(form=form, allow_extra_fields=False)

    assert submit(public, form, {"anything": "goes"}).status_code == 200


# --- Multi-valued fields -----------------------------------------------------------------

def post_urlencoded(client, form, body, **extra):
    extra.setdefault("HTTP_ACCEPT", "application/json")
    return client.post(f"/api/v1/f/{form.slug}", body,
                       content_type="application/x-www-form-urlencoded", **extra)


def test_a_checkbox_group_and_a_multiple_select_take_repeated_names(public, form):
    ruled(form, {"name": "topics", "type": "checkbox", "required": True},
          {"name": "sizes", "type": "select", "options": ["S", "M", "L"]})

    response = post_urlencoded(public, form, "topics=news&topics=offers&sizes=S&sizes=L")

    assert response.status_code == 200
    assert Submission.objects.get().data == [["topics", ["news", "offers"]], ["sizes", ["S", "L"]]]


def test_one_bad_value_among_repeated_select_values_is_refused(public, form):
    ruled(form, {"name": "sizes", "type": "select", "options": ["S", "M"]})

    response = post_urlencoded(public, form, "sizes=S&sizes=XXL")

    assert refused(response) == ("sizes", "UNSPECIFIED")


def test_a_repeated_name_on_a_single_valued_field_is_refused(public, form):
    ruled(form, {"name": "email", "type": "email"})

    response = post_urlencoded(public, form, "email=a%40example.com&email=b%40example.com")

    assert refused(response) == ("email", "TYPE_EMAIL")
    assert response.json()["details"] == {"email": "“email” takes one value, not several."}


def test_a_group_of_blank_values_is_empty(public, form):
    ruled(form, {"name": "topics", "type": "checkbox", "required": True})

    response = post_urlencoded(public, form, "topics=&topics=&x=1")

    assert refused(response) == ("topics", "REQUIRED_FIELD_EMPTY")


# --- Files -------------------------------------------------------------------------------

def test_a_file_field_takes_a_file_part(public, form):
    ruled(form, {"name": "cv", "type": "file", "required": True})

    response = post_html_form(public, form, {
        "name": "Ada", "cv": SimpleUploadedFile("cv.pdf", b"%PDF-1.7", "application/pdf")},
        HTTP_ACCEPT="application/json")

    assert response.status_code == 200
    # No uploads on this form: the file is counted, not kept, as for any file part.
    assert Submission.objects.get().data == [["name", "Ada"], ["cv", "[File: cv.pdf, 8 bytes]"]]


def test_a_required_file_field_without_a_file_is_missing(public, form):
    ruled(form, {"name": "cv", "type": "file", "required": True})

    response = post_html_form(public, form, {"name": "Ada"}, HTTP_ACCEPT="application/json")

    assert refused(response) == ("cv", "REQUIRED_FIELD_MISSING")


def test_text_that_looks_like_a_file_is_not_a_file(public, form):
    ruled(form, {"name": "cv", "type": "file"})

    response = post_html_form(public, form, {"cv": "[File: cv.pdf, 8 bytes]"},
                              HTTP_ACCEPT="application/json")

    assert refused(response) == ("cv", "UNSPECIFIED")


def test_a_file_sent_to_a_text_field_is_refused(public, form):
    ruled(form, {"name": "note", "type": "text"})

    response = post_html_form(public, form, {
        "note": SimpleUploadedFile("a.txt", b"hello", "text/plain")},
        HTTP_ACCEPT="application/json")

    assert refused(response) == ("note", "TYPE_TEXT")
    assert response.json()["details"] == {"note": "“note” must be filled in, not a file."}


# --- Nothing stored, counted or delivered ------------------------------------------------

def test_a_refused_submission_stores_counts_and_delivers_nothing(public, form, user, hook,
                                                                 receiver):
    ruled(form, {"name": "email", "type": "email", "required": True})

    for _ in range(3):
        assert submit(public, form, {"email": "not an address"}).status_code == 422

    assert not Submission.objects.exists()
    assert not Delivery.objects.exists()
    assert receiver.requests == []
    assert usage(user) == 0
    form.refresh_from_db()
    assert form.field_names == []  # no field name was learnt from it either
    assert submit(public, form, {"email": "ada@example.com"}).status_code == 200
    assert usage(user) == 1
    assert Delivery.objects.count() == 1


def test_rules_are_checked_before_the_monthly_limit_is_charged(public, form, user):
    User.objects.filter(pk=user.pk).update(monthly_submission_limit=1)
    ruled(form, {"name": "email", "type": "email", "required": True})

    for _ in range(3):
        assert submit(public, form, {"email": "nope"}).status_code == 422
    assert submit(public, form, {"email": "ada@example.com"}).status_code == 200
    over = submit(public, form, {"email": "bo@example.com"})

    assert over.status_code == 403
    assert over.json()["error"] == "monthly_limit_reached"
    assert Submission.objects.count() == 1


def test_refused_submissions_count_toward_the_rate_limit(public, form):
    # Guessing the rules is no cheaper than any other request.
    form_update(form=form, rate_limit=2)
    ruled(form, {"name": "email", "type": "email", "required": True})

    assert submit(public, form, {"email": "a"}).status_code == 422
    assert submit(public, form, {"email": "b"}).status_code == 422
    assert submit(public, form, {"email": "c@example.com"}).status_code == 429


def test_a_refused_idempotency_key_may_be_used_again(public, form):
    ruled(form, {"name": "email", "type": "email", "required": True})
    key = {"HTTP_IDEMPOTENCY_KEY": "attempt-1"}

    assert submit(public, form, {"email": "a"}, **key).status_code == 422
    fixed = submit(public, form, {"email": "a@example.com"}, **key)

    assert fixed.status_code == 200
    assert Submission.objects.get().data == [["email", "a@example.com"]]


# --- Order against the other checks -----------------------------------------------------

def test_a_honeypot_catch_answers_success_whatever_the_rules(public, form, user):
    form_update(form=form, honeypot_field="website")
    ruled(form, {"name": "email", "type": "email", "required": True})

    response = submit(public, form, {"website": "spam.example", "junk": "x"})

    assert response.status_code == 200
    assert response.json()["success"] is True
    assert not Submission.objects.exists()
    assert usage(user) == 0


def test_the_captcha_is_checked_before_the_rules(public, form, settings):
    from tests.fakes import FakeServer, Reply

    form.set_recaptcha_secret("server-secret")
    form.save()
    ruled(form, {"name": "email", "type": "email", "required": True})
    with FakeServer(lambda _request: Reply(body={"success": False})) as server:
        settings.RECAPTCHA_VERIFY_URL = f"{server.url}/siteverify"
        response = submit(public, form, {"email": "nope", "g-recaptcha-response": "bad"})

    assert response.status_code == 422
    assert response.json()["error"] == "captcha_failed"
    assert [error.get("field") for error in response.json()["errors"]] == [None]  # no rule named


def test_a_body_without_fields_names_the_required_ones(public, form):
    ruled(form, {"name": "email", "type": "email", "required": True})

    response = public.post(f"/api/v1/f/{form.slug}", "{}", content_type="application/json")

    assert refused(response) == ("email", "REQUIRED_FIELD_MISSING")


def test_a_form_without_rules_is_unchanged(public, form):
    response = submit(public, form, {"anything": {"nested": [1, 2]}, "n": "NaN"})

    assert response.status_code == 200


# --- Hostile input -----------------------------------------------------------------------

def test_a_hundred_rules_against_two_hundred_fields(public, form):
    ruled(form, *[{"name": f"f{i}", "type": "number", "required": True, "max": 10}
                  for i in range(100)], allow_extra=False)
    data = {f"f{i}": "11" for i in range(100)} | {f"x{i}": "y" for i in range(100)}

    response = submit(public, form, data)

    assert response.status_code == 422
    assert len(response.json()["errors"]) == 200
    assert len(response.json()["details"]) == 200


def test_a_long_value_past_max_length_is_refused(public, form):
    ruled(form, {"name": "message", "type": "text", "maxLength": 1000})

    response = submit(public, form, {"message": "x" * 5_000_000})

    assert refused(response) == ("message", "TYPE_TEXT")
    assert response.json()["details"] == {
        "message": "“message” must be at most 1000 characters long."}


def test_hostile_names_and_options_are_shown_as_sent(public, form):
    name = "<b>{x}</b> %s"
    ruled(form, {"name": name, "type": "select", "options": ["{0}", "<i>"]})

    response = submit(public, form, {name: "other"})

    assert response.json()["details"] == {name: f"“{name}” must be one of: {{0}}, <i>."}


# --- An HTML form post -------------------------------------------------------------------

def test_an_html_post_gets_a_422_page_naming_each_problem(public, form):
    ruled(form, {"name": "email", "type": "email", "required": True},
          {"name": "<script>", "type": "number"})

    response = post_html_form(public, form, {"email": "ada@", "<script>": "x"})

    assert response.status_code == 422
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "<li>“email” must be a valid email address.</li>" in page
    assert "<li>“&lt;script&gt;” must be a number.</li>" in page
    assert "<script>" not in page
    assert 'href="javascript:history.back()">Go back</a> and correct the form.' in page
    assert not Submission.objects.exists()


def test_a_fetch_with_a_form_body_gets_json(public, form):
    ruled(form, {"name": "email", "type": "email", "required": True})

    response = post_html_form(public, form, {"x": "1"}, HTTP_SEC_FETCH_MODE="cors",
                              HTTP_ORIGIN="https://site.example")

    assert response.status_code == 422
    assert json.loads(response.content)["errors"][0]["code"] == "REQUIRED_FIELD_MISSING"
