"""The public endpoint's checks, in the contract's order, ending in one stored submission."""

from __future__ import annotations

import ipaddress

from django.http import HttpRequest

from config.errors import ServiceError
from config.net import client_ip
from forms_app.models import Form
from forms_app.origins import normalize_origin, origin_of_url
from submissions import admission, captcha, learning, payload, spam
from submissions.models import Submission
from submissions.services import submission_create, submission_hold


# Each error is made fresh for every request: raising one shared instance again and again would
# grow its traceback, and keep every request it passed through alive.
def form_not_found() -> ServiceError:
    return ServiceError("form_not_found", "There is no form at this address.", 404)


def origin_not_allowed() -> ServiceError:
    return ServiceError(
        "origin_not_allowed", "This form does not accept submissions from this site.", 403
    )


def captcha_failed() -> ServiceError:
    return ServiceError(
        "captcha_failed", "The CAPTCHA could not be verified. Please try again.", 422
    )


def empty_submission() -> ServiceError:
    return ServiceError("empty_submission", "The submission has no fields.", 400)


def request_origin(request: HttpRequest) -> str:
    origin = request.headers.get("Origin")
    if origin and origin != "null":
        return normalize_origin(origin) or ""
    referer = request.headers.get("Referer")
    return (origin_of_url(referer) or "") if referer else ""


def origin_allowed(form: Form, origin: str) -> bool:
    return not form.allowed_origins or origin in form.allowed_origins


def _valid_ip(value: str) -> str | None:
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return None


def accept(request: HttpRequest, form: Form) -> Submission | None:
    """Run every check and store the submission; None when a honeypot caught a bot."""
    origin = request_origin(request)
    if not origin_allowed(form, origin):
        raise origin_not_allowed()
    ip = client_ip(request)
    ticket = admission.admit(request, form, ip)
    try:
        data = _checked_fields(request, form, ip)
    except BaseException:
        ticket.release()
        raise
    if data is None:
        ticket.release()
        return None
    stored = {"form": form, "data": data, "ip": _valid_ip(ip), "origin": origin,
              "user_agent": request.headers.get("User-Agent", "")}
    if not form.spam_filter:
        return submission_create(**stored, ticket=ticket)
    verdict = spam.judge(form_id=form.pk, blocked_words=form.blocked_words, data=data, ip=ip)
    if form.owner.spam_marks:
        learning.judge(verdict, owner_id=form.owner_id, data=data)
    try:
        if verdict.held:
            ticket.release()  # a held submission is not counted
            return submission_hold(**stored, verdict=verdict.as_json())
        return submission_create(**stored, ticket=ticket, verdict=verdict.as_json())
    except BaseException:
        spam.forget(form.pk, data, ip)
        raise


def _checked_fields(request: HttpRequest, form: Form, ip: str) -> list[list] | None:
    """The fields to store, after size, honeypot and CAPTCHA; None for a honeypot catch."""
    data = payload.read_fields(request)
    fields = dict(data)
    if form.honeypot_field and fields.get(form.honeypot_field) not in (None, "", []):
        return None
    if form.recaptcha_enabled:
        provider = form.captcha_provider
        token = fields.get(captcha.token_field(provider))
        if not isinstance(token, str) or not captcha.verify(
            provider=provider, secret=form.recaptcha_secret, token=token, remote_ip=ip
        ):
            raise captcha_failed()
    hidden = {*captcha.TOKEN_FIELDS, form.honeypot_field}
    data = [pair for pair in data if pair[0] not in hidden]
    if not data:
        raise empty_submission()
    return data
