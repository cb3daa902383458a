"""The public endpoint's checks, in the contract's order, ending in one stored submission."""

from __future__ import annotations

import ipaddress

from django.http import HttpRequest

from accounts.services import usage_exhausted
from config import ratelimit
from config.errors import ServiceError
from config.net import client_ip
from forms_app.models import Form
from forms_app.origins import normalize_origin, origin_of_url
from submissions import payload, recaptcha
from submissions.models import Submission
from submissions.services import MONTHLY_LIMIT_REACHED, submission_create

CAPTCHA_FIELD = "g-recaptcha-response"
FORM_NOT_FOUND = ServiceError("form_not_found", "There is no form at this address.", 404)
ORIGIN_NOT_ALLOWED = ServiceError(
    "origin_not_allowed", "This form does not accept submissions from this site.", 403
)
CAPTCHA_FAILED = ServiceError(
    "captcha_failed", "The CAPTCHA could not be verified. Please try again.", 422
)
EMPTY = ServiceError("empty_submission", "The submission has no fields.", 400)


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
        raise ORIGIN_NOT_ALLOWED
    ip = client_ip(request)
    ratelimit.enforce(request, f"submit:{form.pk}", ip, form.rate_limit)
    if usage_exhausted(form.owner):
        raise MONTHLY_LIMIT_REACHED
    data = payload.read_fields(request)
    fields = dict(data)
    if form.honeypot_field and fields.get(form.honeypot_field) not in (None, "", []):
        return None
    if form.recaptcha_enabled:
        token = fields.get(CAPTCHA_FIELD)
        if not isinstance(token, str) or not recaptcha.verify(
            secret=form.recaptcha_secret, token=token, remote_ip=ip
        ):
            raise CAPTCHA_FAILED
    hidden = {CAPTCHA_FIELD, form.honeypot_field}
    data = [pair for pair in data if pair[0] not in hidden]
    if not data:
        raise EMPTY
    return submission_create(
        form=form,
        data=data,
        ip=_valid_ip(ip),
        user_agent=request.headers.get("User-Agent", ""),
        origin=origin,
    )
