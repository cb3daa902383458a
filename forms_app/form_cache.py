"""The public endpoint's forms, kept in each web process between submissions.

Reading the form and its owner's settings was a tenth of a submission's web CPU and one of its
two statements. With Redis, each web process keeps the rows it read, with the version tokens
of the form and of its owner (core/infra/versions.py), and the admission script
(submissions/intake/admission/) compares those tokens in the round trip it makes anyway: a form
or an owner changed since is ``Stale``, counted nowhere, and the request is run again on the
form read afresh. So a change (an allowed origin, a rate limit, a deleted form, a deactivated
owner) applies from the next request on, in every process.

A kept form is never used without that check: while Redis is away, intake reads every form
from the database, as it does without Redis at all (the embedded setup keeps nothing). A copy
is also dropped after MAX_AGE_SECONDS, which bounds how long a lost token change (a process
that died between its commit and telling Redis) can go unseen.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from functools import partial

from accounts.models import User
from core.infra import redis, versions
from forms_app.models import Form
from forms_app.selectors import PUBLIC_FORM, public_form

MAX_AGE_SECONDS = 10.0
MAX_FORMS = 4096  # per process; past it the oldest half goes


class Stale(Exception):
    """The kept form or its owner changed since it was read: run again on a fresh read."""


@dataclass(frozen=True)
class _Kept:
    form: Form  # never handed out: each request gets a copy (PUBLIC_FORM.copy)
    tokens: tuple[str, str]
    read_at: float


_kept: dict[str, _Kept] = {}
_lock = threading.Lock()


def version_keys(form: Form) -> list[str]:
    return [versions.key(Form, form.pk), versions.key(User, form.counted_on_id)]


def tokens_of(form: Form) -> tuple[str, str] | None:
    """The version tokens a kept form was read under; None for one read just now."""
    return getattr(form, "_kept_tokens", None)


def form_at(slug: str) -> Form | None:
    """The form at a public endpoint (forms_app.selectors.public_form), kept between calls
    when Redis is there to say whether it changed."""
    if "\x00" in slug:
        return public_form(slug)
    # Only while Redis is there to say whether a kept copy changed (admission asks it).
    used, form = redis.attempt(partial(_kept_or_read, slug), "reading form versions")
    return form if used else public_form(slug)


def _kept_or_read(slug: str, _client) -> Form | None:
    kept = _kept.get(slug)
    if kept is not None and time.monotonic() - kept.read_at < MAX_AGE_SECONDS:
        return _built(kept)
    return _read_and_keep(slug)


def _built(kept: _Kept) -> Form:
    form = PUBLIC_FORM.copy(kept.form)
    form._kept_tokens = kept.tokens  # type: ignore[attr-defined]
    return form


def _read_and_keep(slug: str) -> Form | None:
    """Read, take the tokens, then read again: the second read is what is kept. A change that
    committed before it is in the row; one that committed after it renews a token after
    the tokens were taken, so the copy is stale at its first use."""
    first = PUBLIC_FORM.get(slug)
    if first is None:
        forget(slug)
        return None
    read, tokens = redis.attempt(partial(versions.read, keys=version_keys(first)),
                                 "reading form versions")
    if not read:
        return first
    row = PUBLIC_FORM.row(slug)
    if row is None:
        forget(slug)
        return None
    form = PUBLIC_FORM.build(row)
    if tokens is None or (form.pk, form.counted_on_id) != (first.pk, first.counted_on_id):
        return form
    kept = _Kept(form, (tokens[0], tokens[1]), time.monotonic())
    _keep(slug, kept)
    return _built(kept)


def _keep(slug: str, kept: _Kept) -> None:
    with _lock:
        if len(_kept) >= MAX_FORMS:
            for old in list(_kept)[: MAX_FORMS // 2]:  # dicts keep insertion order
                _kept.pop(old, None)
        _kept[slug] = kept


def forget(slug: str) -> None:
    _kept.pop(slug, None)


def clear() -> None:
    _kept.clear()


versions.on_lost(clear)
