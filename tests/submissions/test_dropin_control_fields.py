"""Other services' control fields (contract, "Drop-in"): honoured, never kept as data, and
never a way for a visitor to steer the server (an open redirect, a mail header, a Cc)."""

from __future__ import annotations

import pytest

from submissions.models import Submission
from tests.conftest import BROWSER_ACCEPT, post_html_form, submit
from tests.submissions.dropin import notifications, notified, stored  # noqa: F401

SITE = "https://site.example"
CONTROL = {
    "_next": f"{SITE}/done", "_subject": "Hello", "_cc": "spy@evil.example",
    "_template": "table", "_captcha": "false", "_autoresponse": "Thanks!",
    "_webhook": "https://evil.example/hook", "_blacklist": "spam", "access_key": "key-1",
    "apikey": "key-2", "accessKey": "key-3", "form-name": "contact", "_gotcha": "",
    "_honey": "", "botcheck": "", "bot-field": "", "h-captcha-response": "token",
    "cf-turnstile-response": "token", "_redirect": f"{SITE}/r", "redirect": f"{SITE}/r2",
    "redirectTo": f"{SITE}/r3",
}


def lands(response) -> str:
    assert response.status_code == 303, response.content
    return response["Location"]


# --- Kept out of the data -----------------------------------------------------------------


def test_control_fields_are_not_stored_and_reply_to_fields_are(public, form):
    data = {"name": "Ada", **CONTROL, "_replyto": "ada@example.com", "replyTo": "a@b.example"}

    response = post_html_form(public, form, data, HTTP_ORIGIN=SITE)

    assert lands(response) == f"{SITE}/done"
    assert stored() == [{"name": "Ada", "_replyto": "ada@example.com", "replyTo": "a@b.example"}]


def test_control_fields_reach_no_export_event_or_pull(public, owner_api, form, hook, receiver):
    submit(public, form, {"name": "Ada", **CONTROL})

    export = owner_api.get(f"/api/v1/forms/{form.pk}/export?format=csv")
    header = b"".join(export.streaming_content).decode().splitlines()[0]
    assert header == '"id","submittedAt","name"'
    [event] = [request.json() for request in receiver.requests]
    assert event["data"]["fields"] == {"name": "Ada"}
    listed = owner_api.get(f"/api/v1/forms/{form.pk}/submissions").json()["data"]
    assert [row["fields"] for row in listed] == [{"name": "Ada"}]
    assert form.__class__.objects.get(pk=form.pk).field_names == ["name"]


def test_a_body_of_control_fields_only_is_empty(public, form):
    response = submit(public, form, {"_next": f"{SITE}/x", "_subject": "Hi"})

    assert response.status_code == 400
    assert response.json()["error"] == "empty_submission"


# --- Honeypots on every form --------------------------------------------------------------


@pytest.mark.parametrize("trap", ["_gotcha", "_honey", "botcheck", "bot-field"])
def test_a_filled_common_honeypot_is_a_silent_catch(public, form, user, trap):
    as_json = submit(public, form, {"name": "Bot", trap: "http://spam.example"})
    as_html = post_html_form(public, form, {"name": "Bot", trap: "on"})

    assert as_json.status_code == 200 and as_json.json()["success"] is True
    assert lands(as_html) == "/thanks"
    assert not Submission.objects.exists()
    user.refresh_from_db()
    assert user.monthly_submission_count == 0


def test_the_owners_honeypot_still_works_beside_them(public, form):
    form.honeypot_field = "website"
    form.save()

    submit(public, form, {"name": "Bot", "website": "x", "_gotcha": ""})
    submit(public, form, {"name": "Ada", "website": "", "_gotcha": ""})

    assert stored() == [{"name": "Ada"}]


# --- _subject, _replyto and _cc in the owner's notification -------------------------------


def test_subject_becomes_the_notifications_subject(public, notified, user):  # noqa: F811
    submit(public, notified, {"name": "Ada", "_subject": "New lead from the pricing page"})

    [sent] = notifications(user.email)
    assert sent.subject == "New lead from the pricing page"
    assert "_subject" not in sent.body


@pytest.mark.parametrize("subject", [
    "Hi\r\nBcc: victim@example.com", "Hi\nBcc: victim@example.com", "Hi\rBcc: victim@example.com",
    "Hi\x85Bcc: victim@example.com", "Hi\u2028Bcc: victim@example.com",
])
def test_a_subject_with_line_breaks_never_adds_a_header(public, notified, user, subject):  # noqa: F811
    submit(public, notified, {"name": "Ada", "_subject": subject})

    [sent] = notifications(user.email)
    raw = sent.message()
    assert raw["Bcc"] is None
    assert raw["Subject"] == "Hi Bcc: victim@example.com"
    assert sent.recipients() == [user.email]


def test_an_over_long_subject_is_cut_to_200_characters(public, notified, user):  # noqa: F811
    submit(public, notified, {"name": "Ada", "_subject": "x" * 5000})

    [sent] = notifications(user.email)
    assert sent.subject == "x" * 200
    assert Submission.objects.get().subject == "x" * 200


def test_cc_and_friends_make_the_server_mail_no_one_else(public, notified, user):  # noqa: F811
    submit(public, notified, {"name": "Ada", "email": "ada@example.com", **CONTROL,
                              "_cc": "spy@evil.example, spy2@evil.example",
                              "_autoresponse": "Mail this to the visitor"})

    [sent] = notifications(user.email)
    assert sent.cc == [] and sent.bcc == []
    assert "evil.example" not in sent.message().as_string()
    assert "Mail this" not in sent.body


def test_replyto_is_the_reply_to_when_the_email_field_is_empty(public, notified, user):  # noqa: F811
    submit(public, notified, {"name": "Ada", "_replyto": "ada@example.com"})
    submit(public, notified, {"name": "Bob", "email": "", "replyto": "bob@example.com"})
    submit(public, notified, {"name": "Cy", "email": "cy@example.com", "replyTo": "x@example.com"})
    submit(public, notified, {"name": "Di", "_replyto": "di@example.com\r\nBcc: v@example.com"})

    sent = notifications(user.email)
    assert [message.reply_to for message in sent] == [
        ["ada@example.com"], ["bob@example.com"], ["cy@example.com"], []]
    assert all(message.message()["Bcc"] is None for message in sent)


# --- Redirect fields, never an open redirect ----------------------------------------------


@pytest.mark.parametrize("name", ["_next", "_redirect", "redirect", "redirectTo"])
def test_each_redirect_field_sends_the_browser_back_to_the_page(public, form, name):
    response = post_html_form(public, form, {"name": "Ada", name: f"{SITE}/thanks?x=1"},
                              HTTP_ORIGIN=SITE)

    assert lands(response) == f"{SITE}/thanks?x=1"


def test_the_first_redirect_field_in_contract_order_wins(public, form):
    response = post_html_form(public, form, {"a": "1", "redirectTo": f"{SITE}/d",
                                                 "_next": f"{SITE}/a"},
                              HTTP_REFERER=f"{SITE}/contact.html")

    assert lands(response) == f"{SITE}/a"


def test_the_redirect_may_be_on_the_forms_redirect_or_an_allowed_origin(public, form):
    form.redirect_url = "https://thanks.example/page"
    form.allowed_origins = [SITE, "https://other.example"]
    form.save()

    by_redirect = post_html_form(public, form, {"a": "1", "_next": "https://thanks.example/b"},
                                 HTTP_ORIGIN=SITE)
    by_allowed = post_html_form(public, form, {"a": "1", "_next": "https://other.example/c"},
                                HTTP_ORIGIN=SITE)

    assert lands(by_redirect) == "https://thanks.example/b"
    assert lands(by_allowed) == "https://other.example/c"


ATTACKS = [
    "https://evil.example/phish",
    "//evil.example/phish",
    "///evil.example",
    "/\\evil.example",
    "\\\\evil.example",
    "https:\\\\evil.example",
    "https://site.example\\@evil.example",
    "https://site.example@evil.example/",
    "https://site.example:443@evil.example/",
    "https://user:pass@site.example/",
    "https://site.example.evil.example/",
    "javascript:alert(document.domain)",
    "JavaScript://site.example/%0aalert(1)",
    "data:text/html,<script>alert(1)</script>",
    "https://site.example/\r\nSet-Cookie: x=1",
    " https://evil.example",
    "https://evil.example#https://site.example/",
    "ftp://site.example/file",
    "/relative/path",
    "http://site.example/",  # another scheme is another origin
]


@pytest.mark.parametrize("target", ATTACKS)
def test_a_redirect_elsewhere_falls_back_to_the_forms_own(public, form, target):
    plain = post_html_form(public, form, {"name": "Ada", "_next": target}, HTTP_ORIGIN=SITE)
    form.redirect_url = "https://thanks.example/"
    form.save()
    own = post_html_form(public, form, {"name": "Ada", "_redirect": target}, HTTP_ORIGIN=SITE)
    as_json = submit(public, form, {"name": "Ada", "redirect": target}, HTTP_ORIGIN=SITE)

    assert lands(plain) == "/thanks"
    assert lands(own) == "https://thanks.example/"
    assert as_json.json()["next"] == "https://thanks.example/"


def test_without_origin_or_referer_only_the_forms_origins_are_trusted(public, form):
    response = post_html_form(public, form, {"a": "1", "_next": f"{SITE}/done"})

    assert lands(response) == "/thanks"


def test_a_json_next_follows_the_same_rule(public, form):
    response = submit(public, form, {"name": "Ada", "_next": f"{SITE}/done"}, HTTP_ORIGIN=SITE)

    assert response.json()["next"] == f"{SITE}/done"
    assert stored() == [{"name": "Ada"}]


def test_a_page_with_accept_star_gets_redirected_too(public, form):
    response = public.post(f"/api/v1/f/{form.slug}", {"_next": f"{SITE}/x", "a": "1"},
                           HTTP_ACCEPT="*/*", HTTP_REFERER=f"{SITE}/")

    assert lands(response) == f"{SITE}/x"


def test_the_error_page_never_follows_a_redirect_field(public, form):
    form.allowed_origins = ["https://only.example"]
    form.save()

    response = post_html_form(public, form, {"a": "1", "_next": f"{SITE}/x"}, HTTP_ORIGIN=SITE,
                              HTTP_ACCEPT=BROWSER_ACCEPT)

    assert response.status_code == 403
    assert "Location" not in response
