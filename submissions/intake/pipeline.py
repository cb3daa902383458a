"""The public endpoint's checks, in the contract's order, ending in one stored submission."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import IntegrityError

from core import metrics
from core.errors import ServiceError
from core.ids import new_id
from files.receiving import Received, receiving
from files.services import files_stored
from forms_app import form_cache
from forms_app.models import Form
from forms_app.selectors import public_form
from submissions import learning
from submissions.intake import admission, captcha, control_fields, idempotency, rules, spam
from submissions.intake.admission import Ticket
from submissions.intake.store import submission_create, submission_hold
from submissions.intake.visit import Visit
from submissions.models import Submission

T = TypeVar("T")


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


class Body:
    """The request's fields, read once: a request may run intake twice (a kept form that
    turned out stale, forms_app/form_cache.py)."""

    def __init__(self, read: Callable[[], list[list]]) -> None:
        self._read = read
        self._read_once: tuple[list[list], ServiceError | None] | None = None
        self.uploads: Received | None = None  # the files, when the form keeps them

    def receive_files(self, form: Form | None) -> Received | None:
        self.uploads = receiving(form) if form is not None else None
        return self.uploads

    def close(self) -> None:
        if self.uploads is not None:
            self.uploads.close()

    def __call__(self) -> list[list]:
        if self._read_once is None:
            try:
                self._read_once = self._read(), None
            except ServiceError as error:
                self._read_once = [], error
        fields, problem = self._read_once
        if problem is not None:  # a new exception each time, never the same one raised again
            raise ServiceError(problem.code, problem.message, problem.status_code,
                               problem.details, problem.headers)
        return fields


def origin_allowed(form: Form, origin: str) -> bool:
    return not form.allowed_origins or origin in form.allowed_origins


class _Current:
    """The form a request works on: the kept copy until it proves out of date
    (``form_cache.Stale``, raised by admission and by the checks below), then one fresh read,
    which never does. The one place a stale form is retried. ``check`` is what every read of
    the form must pass before anything runs on it (the origin)."""

    def __init__(self, slug: str, form: Form, check: Callable[[Form], None]) -> None:
        self.slug, self.form, self._check = slug, form, check
        self.run(check)

    def run(self, step: Callable[[Form], T]) -> T:
        try:
            return step(self.form)
        except form_cache.Stale:
            self.form = self._reread()
            self._check(self.form)
            return step(self.form)

    def _reread(self) -> Form:
        form_cache.forget(self.slug)
        form = public_form(self.slug)
        if form is None:
            raise form_not_found()
        return form


def accept(visit: Visit, slug: str, form: Form,
           read_fields: Callable[[], list[list]]) -> tuple[uuid.UUID, Form]:
    """Run every check and store the submission: the id the answer names, and the form as
    last read. A honeypot catch stores nothing and is answered with an id all the same, so a
    bot learns nothing. ``form``: the one at ``slug``, maybe a kept copy (form_cache.form_at);
    found out of date, it is read afresh (form_not_found if it is gone).

    With an Idempotency-Key, a key answered before is answered the same, and nothing else
    happens (submissions/intake/idempotency.py). The claim is held across a fresh read: given back
    and taken again, a claim taken over under the first request's id would come back under a
    new one, and both requests could store."""
    current = _Current(slug, form, lambda kept: _check_origin(visit, kept))
    key = idempotency.parse(visit.idempotency_key)
    body = _fingerprint(current.form, read_fields) if key is not None else None
    if key is None or body is None:  # no key, or a body that fails whatever the key says
        submission_id = new_id()
        current.run(lambda kept: _run(visit, kept, read_fields, submission_id))
        return submission_id, current.form
    claim = current.run(lambda kept: _claim(kept, key, body))
    if claim.replay:
        return claim.submission_id, current.form
    try:
        stored = current.run(lambda kept: _run(visit, kept, read_fields, claim.submission_id))
    except IntegrityError:
        if not Submission.objects.filter(pk=claim.submission_id).exists():
            claim.give_back()
            raise
        stored = True  # a claim taken over from a request that stored after all: its answer
    except BaseException:
        claim.give_back()
        raise
    claim.stored() if stored else claim.dropped()
    return claim.submission_id, current.form


def _check_origin(visit: Visit, form: Form) -> None:
    if not origin_allowed(form, visit.origin):
        if form_cache.tokens_of(form) is not None:
            raise form_cache.Stale  # a kept form may be out of date: refuse on a fresh read
        raise origin_not_allowed()


def _claim(form: Form, key: str, body: str) -> idempotency.Claim:
    try:
        return idempotency.claim(form, key, body)
    except idempotency.FormGone:
        # Exactly what the same post without a key meets: a kept copy is read afresh, and a
        # form that is not there is a 404.
        if form_cache.tokens_of(form) is not None:
            raise form_cache.Stale from None
        raise form_not_found() from None


def _fingerprint(form: Form, read_fields: Callable[[], list[list]]) -> str | None:
    """The fingerprint of the fields a keyed request would store; None for a body that
    cannot be read (refused on its own terms, storing nothing)."""
    data, unreadable = _read(read_fields)
    return None if unreadable is not None else idempotency.fingerprint(_visible(data, form))


def _run(
    visit: Visit, form: Form, read_fields: Callable[[], list[list]], submission_id: uuid.UUID
) -> bool:
    """The checks, in the contract's order, then the store; False for a honeypot catch.

    The body is read before admission, so the duplicate check rides in admission's Redis
    round trip, but what is wrong with it is answered after: the contract puts 403 and 429
    before 413 and 400."""
    data, unreadable = _read(read_fields)
    visible = _visible(data, form)
    seen = spam.fingerprint(form.pk, visible, visit.ip or "") if form.spam_filter else None
    with admission.admitted(visit, form, seen_key=seen if visible else None,
                            token=str(submission_id)) as ticket:
        if unreadable is not None:
            raise unreadable
        checked = _checked(data, visible, visit, form)
        if checked is None:
            metrics.submission("honeypot")
            return False
        # Files past the quota store nothing and count nothing.
        with files_stored(form=form, received=getattr(read_fields, "uploads", None),
                          submission_id=submission_id):
            _store(visit, form, checked, ticket, submission_id, control_fields.subject(data))
    return True


def _read(read_fields: Callable[[], list[list]]) -> tuple[list[list], ServiceError | None]:
    try:
        return read_fields(), None
    except ServiceError as error:
        return [], error


def _visible(data: list[list], form: Form) -> list[list]:
    """The fields stored: without control fields, CAPTCHA tokens and the honeypot."""
    return control_fields.visible(data, form)


def _checked(data: list[list], visible: list[list], visit: Visit, form: Form) -> list[list] | None:
    """The fields to store, after honeypot, CAPTCHA and the form's field rules; None for a
    honeypot catch. The rules come last, so a bot learns them no cheaper than a visitor: a
    honeypot catch is still answered as a success, and a form with CAPTCHA names no rule to
    a request that has not passed it. Inside admission, like every check on the body: the
    request counts toward the rate limit, and its reservation of the monthly quota is given
    back, so a refused submission is never charged."""
    fields = dict(data)
    if control_fields.caught(fields, form):
        return None
    if form.recaptcha_enabled:
        provider = form.captcha_provider
        token = fields.get(captcha.token_field(provider))
        if not isinstance(token, str) or not captcha.verify(
            provider=provider, secret=form.recaptcha_secret, token=token,
            remote_ip=visit.ip or "",
        ):
            raise captcha_failed()
    rules.check(form, visible)
    if not visible:
        raise empty_submission()
    return visible


def _store(
    visit: Visit, form: Form, data: list[list], ticket: Ticket, submission_id: uuid.UUID,
    subject: str,
) -> Submission:
    """Into the inbox (the ticket kept), or held in the spam folder (not counted: the ticket
    is given back when admission's block ends). ``subject``: the page's ``_subject``, for the
    owner's notification."""
    stored: dict[str, Any] = {"form": form, "data": data, "ip": visit.ip, "origin": visit.origin,
              "user_agent": visit.user_agent, "submission_id": submission_id,
              "subject": subject}
    if not form.spam_filter:
        created = submission_create(**stored, ticket=ticket)
        metrics.submission("stored")
        return created
    ip = visit.ip or ""
    verdict = spam.judge(form_id=form.pk, blocked_words=form.blocked_words, data=data, ip=ip,
                         duplicate=ticket.duplicate)
    if form.counted_on.spam_marks:
        learning.judge(verdict, owner_id=form.counted_on_id, data=data)
    try:
        if verdict.held:
            held = submission_hold(**stored, verdict=verdict.as_json())
            metrics.submission("spam")
            return held
        created = submission_create(**stored, ticket=ticket, verdict=verdict.as_json())
        metrics.submission("stored")
        return created
    except BaseException:
        spam.forget(form.pk, data, ip)
        raise
