"""Each hosted service's documented HTML form, with only its ``action`` changed (contract,
"Drop-in"; docs/migrating.md shows the same forms): where the browser lands, what is stored,
and what the owner's notification looks like, posted urlencoded and multipart."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

import pytest

from tests.conftest import BROWSER_ACCEPT
from tests.submissions.dropin import notifications, notified, stored  # noqa: F401

SITE = "https://www.example.org"
PAGE = f"{SITE}/contact.html"
VISITOR = {"name": "Ada Lovelace", "email": "ada@example.com", "message": "Hello there."}


@dataclass
class Service:
    slug: str  # the form's id at the service, kept as its slug here
    sent: list[tuple[str, str]]  # the form's inputs as the service's docs write them
    lands: str  # where the browser is sent
    subject: str  # the owner's notification's subject
    kept: dict = field(default_factory=lambda: dict(VISITOR))  # what is stored
    reply_to: list = field(default_factory=lambda: ["ada@example.com"])


SERVICES = {
    # formspree.io/html: _replyto, _subject, _next, _cc and the _gotcha honeypot.
    "formspree": Service(
        slug="xayzabcd",
        sent=[("name", VISITOR["name"]), ("_replyto", VISITOR["email"]),
              ("message", VISITOR["message"]), ("_subject", "New contact from the site"),
              ("_next", f"{SITE}/thanks.html"), ("_cc", "partner@elsewhere.example"),
              ("_gotcha", "")],
        lands=f"{SITE}/thanks.html", subject="New contact from the site",
        kept={"name": VISITOR["name"], "_replyto": VISITOR["email"],
              "message": VISITOR["message"]}),
    # usebasin.com: a _gotcha honeypot, a _redirect (the dashboard's redirect otherwise).
    "basin": Service(
        slug="a1b2c3d4e5f6",
        sent=[*VISITOR.items(), ("_gotcha", ""), ("_redirect", f"{SITE}/merci")],
        lands=f"{SITE}/merci", subject="New submission: Contact"),
    # getform.io: a _gotcha honeypot; no redirect field, so the form's redirectUrl.
    "getform": Service(
        slug="bvkxzqwe",
        sent=[*VISITOR.items(), ("_gotcha", "")],
        lands="https://www.example.org/form-sent", subject="New submission: Contact"),
    # formsubmit.co: _next, _subject, _cc, _captcha, _template, _honey, _autoresponse.
    "formsubmit": Service(
        slug="formsubmit-contact",
        sent=[*VISITOR.items(), ("_next", f"{SITE}/thanks"), ("_subject", "New message!"),
              ("_cc", "another@elsewhere.example"), ("_captcha", "false"),
              ("_template", "table"), ("_honey", ""),
              ("_autoresponse", "We got it"), ("_blacklist", "spam, viagra")],
        lands=f"{SITE}/thanks", subject="New message!"),
    # web3forms.com: access_key, subject and from_name (their fields, kept as data),
    # redirect, and the botcheck checkbox (unticked: not sent).
    "web3forms": Service(
        slug="web3forms-contact",
        sent=[("access_key", "YOUR_ACCESS_KEY_HERE"), ("subject", "New Submission"),
              ("from_name", "My Website"), ("redirect", f"{SITE}/thanks"), *VISITOR.items()],
        lands=f"{SITE}/thanks", subject="New submission: Contact",
        kept={"subject": "New Submission", "from_name": "My Website", **VISITOR}),
    # staticforms.xyz: accessKey, redirectTo, replyTo and their honeypot field.
    "staticforms": Service(
        slug="staticforms-contact",
        sent=[("accessKey", "sf_key"), ("redirectTo", f"{SITE}/thanks"),
              ("replyTo", "@"), *VISITOR.items(), ("honeypot", "")],
        lands=f"{SITE}/thanks", subject="New submission: Contact",
        kept={"replyTo": "@", **VISITOR}),
    # Netlify Forms: form-name, and the bot-field honeypot (netlify-honeypot="bot-field").
    "netlify": Service(
        slug="netlify-contact",
        sent=[("form-name", "contact"), ("bot-field", ""), *VISITOR.items()],
        lands="https://www.example.org/form-sent", subject="New submission: Contact"),
}


@pytest.fixture
def imported(owner_api, notified):  # noqa: F811
    """The service's form, imported: its id kept as the slug, a redirect set as in the
    service's dashboard, the Static Forms honeypot named as the owner's."""
    def make(service: Service):
        response = owner_api.patch(f"/api/v1/forms/{notified.pk}", {
            "slug": service.slug, "redirectUrl": f"{SITE}/form-sent",
            "honeypotField": "honeypot"}, format="json")
        assert response.status_code == 200
        return response.json()
    return make


def post(public, slug: str, sent: list[tuple[str, str]], encoding: str):
    headers = {"HTTP_ACCEPT": BROWSER_ACCEPT, "HTTP_ORIGIN": SITE, "HTTP_REFERER": PAGE,
               "HTTP_SEC_FETCH_MODE": "navigate"}
    if encoding == "urlencoded":
        return public.post(f"/f/{slug}", urlencode(sent),
                           content_type="application/x-www-form-urlencoded", **headers)
    return public.post(f"/f/{slug}", dict(sent), **headers)  # the test client's multipart


@pytest.mark.parametrize("encoding", ["urlencoded", "multipart"])
@pytest.mark.parametrize("name", list(SERVICES))
def test_a_services_documented_form_works_with_only_its_action_changed(
        public, imported, user, name, encoding):
    service = SERVICES[name]
    imported(service)

    response = post(public, service.slug, service.sent, encoding)

    assert (response.status_code, response["Location"]) == (303, service.lands)
    assert stored() == [service.kept]
    [sent] = notifications(user.email)
    assert sent.subject == service.subject
    assert sent.reply_to == service.reply_to
    assert sent.cc == [] and sent.bcc == []
    body = sent.body
    for name_, value in service.kept.items():
        assert f"{name_}: {value}" in body
    for hidden in ("_next", "_redirect", "redirectTo", "_cc", "_gotcha", "access_key",
                   "accessKey", "form-name", "bot-field", "_honey", "_template"):
        assert f"{hidden}:" not in body


@pytest.mark.parametrize("trap", [("formspree", "_gotcha"), ("formsubmit", "_honey"),
                                  ("netlify", "bot-field"), ("staticforms", "honeypot"),
                                  ("web3forms", "botcheck")])
def test_each_services_honeypot_catches_a_bot(public, imported, user, trap):
    name, honeypot = trap
    service = SERVICES[name]
    imported(service)
    sent = [(key, value) for key, value in service.sent if key != honeypot]

    response = post(public, service.slug, [*sent, (honeypot, "on")], "urlencoded")

    assert (response.status_code, response["Location"]) == (303, service.lands)
    assert stored() == []
    assert notifications(user.email) == []
