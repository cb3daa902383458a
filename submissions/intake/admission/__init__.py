"""The rate limit and the monthly quota of one public submission.

With Redis, one script in one round trip counts the request against the form's per-address
rate and, if it passes, checks and reserves one submission of the owner's monthly quota; no
database row is locked. A reservation that ends without a stored submission (a bad body, a
failed CAPTCHA, a honeypot catch, a failed commit) is given back.

Without Redis (the embedded setup) the rate is counted in process memory, and the quota is
checked here and again inside the storing transaction, which SQLite runs one at a time.

While a configured Redis is away, intake goes on the same way: the rate is counted in this
process's memory (so each web process allows the form's rate), and the quota is checked in
the storing transaction under the owner's row lock, exact but slower. The Redis counters of
the accounts admitted meanwhile are stale then, and are dropped (to be seeded again from the
database) as soon as this process reaches Redis again.

Each reservation is held under the submission's id in a sorted set beside the counter, with
its end (Redis's clock) as its score. A release gives back only what its request holds: the
count goes down only when that id leaves the set, so a counter that was flushed, reset or
recounted meanwhile is never pushed below what it holds. A recount never deletes the counter:
it raises it to what the database recorded plus the reservations still live and not yet
stored (docs/exactness.md).

A counter lost with its reservations (a flush, a restart) cannot know the requests it admitted
that are still running. So each seeding first moves the month's generation on in the database
(accounts/quota.py), and the generation is kept beside the counter: admission answers it, and
a submission is stored only under the generation it was admitted by. One admitted by a lost
counter is fenced off, gives back what it holds, and is admitted again (``readmit``).

A form kept in the web process (forms_app/form_cache.py) is checked in the same script, first:
if it or its owner changed since it was read, nothing is counted and ``Stale`` is raised, for
the request to run again on a fresh read. So is it while Redis is away.

The reservation is owned here: ``admitted`` (and ``rescue_admitted``) hold it for the block
that stores, and give it back exactly when the block ends without a stored submission. Where
the quota is counted (Redis, or the database alone) is chosen once at start: in_redis.py or
in_database.py, behind one interface.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import date

from accounts import quota
from accounts.models import current_month
from core.ids import new_id
from core.infra import ratelimit, redis
from forms_app import form_cache
from forms_app.models import Form
from submissions.intake import spam
from submissions.intake.admission.in_database import InDatabase
from submissions.intake.admission.in_redis import InRedis
from submissions.intake.admission.ticket import Ticket, monthly_limit_reached
from submissions.intake.visit import Visit

_counter: InRedis | InDatabase = InRedis() if redis.client() is not None else InDatabase()


@contextmanager
def admitted(visit: Visit, form: Form, *, seen_key: str | None = None,
             token: str = "") -> Iterator[Ticket]:
    """The request's admission (``admit``), held while the block runs (``_held``). A
    fingerprint this request noted first is forgotten if the block fails: a retry that passes
    the CAPTCHA is not its duplicate."""
    with _held(admit(visit, form, seen_key, token)) as ticket:
        try:
            yield ticket
        except BaseException:
            if seen_key and ticket.duplicate is False:
                spam.forget_key(seen_key)
            raise


def rescue_admitted(owner, token: str) -> AbstractContextManager[Ticket]:
    """A rescue's admission (``admit_rescue``), held as a request's is."""
    return _held(admit_rescue(owner, token))


@contextmanager
def _held(ticket: Ticket) -> Iterator[Ticket]:
    """The one place a reservation is given back: when the block ends without having stored
    it (``ticket.kept``), raising or not."""
    try:
        yield ticket
    finally:
        if not ticket.kept:
            _counter.release(ticket)


def admit(visit: Visit, form: Form, seen_key: str | None = None, token: str = "") -> Ticket:
    """Rate limit, then monthly limit, in the contract's order; raises ServiceError.

    ``seen_key``: the submission's fingerprint, noted for the duplicate check in the same
    round trip (submissions/intake/spam.py). ``token``: the id the submission will be stored
    under, which names its reservation."""
    owner = form.counted_on
    ticket = Ticket(owner.pk, current_month(), quota.limit_of(owner), reserved=False,
                    token=token or str(new_id()))
    if _counter.admit(visit.rate_key, form, ticket, seen_key):
        return ticket
    if form_cache.tokens_of(form) is not None:
        form_cache.clear()  # nothing can say whether the kept forms still hold
        raise form_cache.Stale
    _counter.counted_by_the_database(ticket)
    # Without Redis, or while it is away: the cache's window, which is then this process's.
    ratelimit.enforce(f"submit:{form.pk}", visit.rate_key, form.rate_limit)
    if quota.used(owner.pk, ticket.month) >= ticket.limit:
        raise monthly_limit_reached()
    return ticket  # the quota is checked again inside the storing transaction


def admit_rescue(owner, token: str) -> Ticket:
    """A rescue from the spam folder is counted like a public submission: it takes a
    reservation under the monthly limit (no rate limit), or is refused at the limit. Without
    Redis the record is checked here, and again by nothing: rescues are an owner's clicks."""
    ticket = Ticket(owner.pk, current_month(), quota.limit_of(owner), reserved=False,
                    token=token)
    if _counter.reserve(ticket):
        return ticket
    _counter.counted_by_the_database(ticket)
    if quota.used(owner.pk, ticket.month) >= ticket.limit:
        raise monthly_limit_reached()
    return ticket


def readmit(ticket: Ticket) -> None:
    """A ticket the record fenced off (its counter was seeded again, or reset, since it was
    admitted): give back what it holds and take a place under the counter as it is now, or
    ``monthly_limit_reached``. Under the same id, so a keyed request keeps its submission.
    Not reserved (checked in the storing transaction) while Redis is away."""
    fenced = ticket.generation
    _counter.release(ticket)
    ticket.generation = None
    if not _counter.reserve(ticket, fenced):
        _counter.counted_by_the_database(ticket)


def fence_redis_reservations(ticket: Ticket) -> None:
    """Admitted by the database while a configured Redis was away: reservations Redis still
    holds are not in the record, so the record moves to a new generation (each of them is
    admitted again, against a counter seeded afresh, before it stores) and the limit is
    checked on the record read under all the month's shards."""
    with quota.month_locked(ticket.user_id, ticket.month) as record:
        record.move_on()
        if record.recorded >= ticket.limit:
            raise monthly_limit_reached()


def recount(user_id, month: date) -> None:
    """After a count made outside admission (a rescue from the spam folder, an outage):
    raise the Redis counter to the record plus the live reservations. Never lowered, never
    deleted: a request admitted before still gives back only what it holds. Never created
    either: a missing counter is seeded by the next admission, under a new generation."""
    _counter.recount(user_id, month)


def reset(user_id, month: date) -> None:
    """An operator's reset: the record back to zero under a new generation, and the counter to
    what is live and not stored, exactly. A request admitted before is fenced off when it
    stores, and admitted again under this counter."""
    with quota.month_locked(user_id, month) as record:
        _counter.reset(record, user_id, month)
