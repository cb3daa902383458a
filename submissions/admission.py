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
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import date

from accounts import quota
from accounts.models import current_month
from core.errors import ServiceError, database_unavailable, retry_later
from core.ids import new_id
from core.infra import ratelimit, redis
from forms_app import form_cache
from forms_app.models import Form
from submissions.models import Status, Submission
from submissions.spam import DUPLICATE_WINDOW_SECONDS
from submissions.visit import Visit

RATE_WINDOW_SECONDS = 60

# KEYS: rate counter, quota counter, the quota's live reservations, the quota's generation,
# the version tokens of the form and of its owner, and the submission's fingerprint for the
# spam filter's duplicate check (or none). ARGV: rate limit, window seconds, monthly limit,
# whether to count the rate ('1'; '-1' when retrying after seeding the quota: counted by the
# first call, and given back if the form is found stale, for the run on a fresh read counts
# it again), seconds a fingerprint
# is kept, whether the form is a kept copy, the tokens it was read under, the reservation's
# id, how long it is held, how long the reservations' set is kept, and a generation the
# database has moved past (or ''): a counter still at it is as good as none.
# Answers {code, generation}: 0 admitted (one submission reserved, under that generation),
# 1 rate limited, 2 quota not seeded, 3 over quota, 4 admitted as a duplicate (held by the
# filter, so nothing reserved), 5 the kept form is stale (nothing counted).
GATE = """
if ARGV[6] == '1' and (redis.call('GET', KEYS[5]) ~= ARGV[7]
                       or redis.call('GET', KEYS[6]) ~= ARGV[8]) then
  if ARGV[4] == '-1' and redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECR', KEYS[1]) end
  return {5, 0}
end
if ARGV[4] == '1' then
  local hits = redis.call('INCR', KEYS[1])
  if hits == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
  if hits > tonumber(ARGV[1]) then return {1, 0} end
end
local used = redis.call('GET', KEYS[2])
local generation = redis.call('GET', KEYS[4])
if not used or not generation or generation == ARGV[12] then return {2, 0} end
if tonumber(used) >= tonumber(ARGV[3]) then return {3, 0} end
if KEYS[7] and not redis.call('SET', KEYS[7], 1, 'NX', 'EX', ARGV[5]) then return {4, 0} end
local now = tonumber(redis.call('TIME')[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[10]), ARGV[9])
redis.call('EXPIRE', KEYS[3], ARGV[11])
redis.call('INCR', KEYS[2])
return {0, tonumber(generation)}
"""
ADMITTED, RATE_LIMITED, NOT_SEEDED, OVER_QUOTA, DUPLICATE, STALE = 0, 1, 2, 3, 4, 5

# KEYS: quota counter, its live reservations. ARGV: the reservation's id. Down by one only
# if this request still held it (and a counter is there to hold it).
RELEASE = """
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('DECR', KEYS[1])
  return 1
end
return 0
"""

# The reservations held and not stored yet (ARGV from the fourth on: the ids among them already
# stored, counted in the record), after dropping the ended ones. KEYS[2]: the reservations.
LIVE_NOT_STORED = """
local function live_not_stored()
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(redis.call('TIME')[1]))
  local stored = {}
  for index = 4, #ARGV do stored[ARGV[index]] = true end
  local live = 0
  for _, held in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    if not stored[held] then live = live + 1 end
  end
  return live
end
"""

# KEYS: quota counter, its live reservations, its generation. ARGV: the recorded count, the
# counter's lifetime, the generation the count was read under, then the ids among the
# reservations already stored. Only raises a seeded counter of that generation; a missing one
# is left to the next admission, which seeds it under a new generation, and one of another
# generation was set by a seeding or a reset after the count was read, from a newer record.
RECOUNT = LIVE_NOT_STORED + """
local current = redis.call('GET', KEYS[1])
if not current or redis.call('GET', KEYS[3]) ~= ARGV[3] then return -1 end
local target = tonumber(ARGV[1]) + live_not_stored()
if tonumber(current) < target then
  redis.call('SET', KEYS[1], target, 'EX', ARGV[2])
  return target
end
return tonumber(current)
"""

# KEYS: as RECOUNT. ARGV: the count recorded under the generation, the keys' lifetime, the
# generation the record was just moved to, then the ids among the reservations already
# stored. Sets the counter to exactly the record plus the live reservations not stored, and
# the generation beside it, unless a later seeding (a higher generation) is there already.
SEED = LIVE_NOT_STORED + """
if tonumber(redis.call('GET', KEYS[3]) or '-1') >= tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[1], tonumber(ARGV[1]) + live_not_stored(), 'EX', ARGV[2])
redis.call('SET', KEYS[3], ARGV[3], 'EX', ARGV[2])
return 1
"""

# KEYS: the quota's live reservations. Drops the ended ones and lists the rest.
LIVE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(redis.call('TIME')[1]))
return redis.call('ZRANGE', KEYS[1], 0, -1)
"""

# Every request ends within 30 s ("Nothing waits forever"): a reservation held twice that is
# one whose request has ended.
HOLD_SECONDS = 60


def monthly_limit_reached() -> ServiceError:
    return ServiceError(
        "monthly_limit_reached",
        "This form's account has used its monthly submission limit.",
        status_code=403,
    )


def rate_limited(retry_after: int) -> ServiceError:
    return retry_later("rate_limited", "Too many requests. Try again later.", retry_after)


@functools.cache
def _script(client, text: str = GATE):
    return client.register_script(text)


def held_key(user_id, month: date) -> str:
    return f"{quota.redis_key(user_id, month)}:held"


def generation_key(user_id, month: date) -> str:
    return f"{quota.redis_key(user_id, month)}:generation"


def _quota_keys(user_id, month: date) -> list[str]:
    return [quota.redis_key(user_id, month), held_key(user_id, month),
            generation_key(user_id, month)]


@dataclass
class Ticket:
    """One admitted submission: where its quota is counted, and whether Redis holds it."""

    user_id: object
    month: date
    limit: int
    reserved: bool  # counted in Redis already; False: check in the storing transaction
    # Whether the fingerprint was seen in the last 10 minutes; None when admission did not
    # look (no fingerprint, no Redis, Redis away).
    duplicate: bool | None = None
    token: str = ""  # the reservation's id in Redis: the submission's id
    # The counter's generation when it reserved: stored only while the record is at it.
    generation: int | None = None
    # Admitted by the database while a configured Redis was away: its store must move the
    # record's generation on, so reservations Redis still holds are admitted again before
    # they store (they are not in the record the store counts).
    fence: bool = False

    def release(self) -> None:
        """Give the reservation back: nothing was stored. Only what this request holds."""
        client = redis.client()
        if self.reserved and client is not None:  # only Redis reserves
            self.reserved = False
            try:
                _release(client, self.user_id, self.month, self.token)
            except redis.Unavailable as error:
                redis.failed(error, "giving a reservation back")
                _unreleased.append((self.user_id, self.month, self.token))


def _release(client, user_id, month: date, token: str) -> None:
    keys = [quota.redis_key(user_id, month), held_key(user_id, month)]
    _script(client, RELEASE)(keys=keys, args=[token])


# While Redis was away: the quotas this process counted in the database only (recounted on
# its next reach), and the reservations it could not give back (given back then).
_stale_quotas: set[tuple[object, date]] = set()
_unreleased: list[tuple[object, date, str]] = []


def recount(user_id, month: date) -> None:
    """After a count made outside admission (a rescue from the spam folder, an outage):
    raise the Redis counter to the record plus the live reservations. Never lowered, never
    deleted: a request admitted before still gives back only what it holds. Never created
    either: a missing counter is seeded by the next admission, under a new generation."""
    client = redis.client()
    if client is None:
        return
    try:
        _recount(client, user_id, month)
    except redis.Unavailable as error:
        redis.failed(error, "recounting a quota")
        _stale_quotas.add((user_id, month))


def reset(user_id, month: date) -> None:
    """An operator's reset: the record back to zero under a new generation, and the counter to
    what is live and not stored, exactly. A request admitted before is fenced off when it
    stores, and admitted again under this counter."""
    client = redis.client()
    with quota.month_locked(user_id, month) as record:
        if client is None:
            record.move_on(reset=True)
            return
        record.move_on(_counter_in_redis(client, user_id, month)[1], reset=True)
        _publish(client, user_id, month, record.generation, recorded=0)


def _recount(client, user_id, month: date) -> int:
    """Read in this order so that a race counts a submission twice, never not at all: the
    live reservations, which of them are stored, then the record."""
    keys = _quota_keys(user_id, month)
    held = [token.decode() for token in _script(client, LIVE)(keys=keys[1:2])]
    stored = _stored_among(held)
    recorded, generation = quota.used_under(user_id, month)
    args = [recorded, quota.KEY_TTL_SECONDS, str(generation), *stored]
    return int(_script(client, RECOUNT)(keys=keys, args=args))


def _seed(client, user_id, month: date) -> None:
    """A missing counter (or one the record has moved past): the record moves to a new
    generation and is read under it, and the counter is set while the record is locked; from
    then on nothing admitted before can store. Requests that found no counter at the same
    moment queue on the record's locks; the first seeds, and the others find its counter and
    leave it be (each seeding would fence off what the one before admitted)."""
    with quota.month_locked(user_id, month) as record:
        seeded, generation = _counter_in_redis(client, user_id, month)
        if seeded and generation == record.generation:
            return
        record.move_on(generation)
        _publish(client, user_id, month, record.generation, record.recorded)


def _counter_in_redis(client, user_id, month: date) -> tuple[bool, int]:
    """Whether the counter is there with its generation (a counter without one, left by
    1.0.0, is none: GATE answers it as not seeded), and that generation (0: none)."""
    keys = _quota_keys(user_id, month)
    used, generation = client.mget(keys[0], keys[2])
    return used is not None and generation is not None, int(generation or 0)


def _publish(client, user_id, month: date, generation: int, recorded: int) -> None:
    """Set the counter of ``generation``. Read after the record moved to it, so which live
    reservations are stored is final: none admitted before can store any more."""
    keys = _quota_keys(user_id, month)
    held = [token.decode() for token in _script(client, LIVE)(keys=keys[1:2])]
    args = [recorded, quota.KEY_TTL_SECONDS, generation, *_stored_among(held)]
    _script(client, SEED)(keys=keys, args=args)


def _stored_among(tokens: list[str]) -> list[str]:
    """The reservations whose submission is stored and counted. A rescue reserves under the id
    of a submission waiting in the spam folder: live until it moves. (One marked spam within
    the hold after it was stored is taken as live too: a place held a minute early.)"""
    if not tokens:
        return []
    found = (Submission.objects.filter(pk__in=tokens).exclude(status=Status.SPAM)
             .values_list("pk", flat=True))
    return [str(pk) for pk in found]


def _catch_up(client) -> None:
    """What this process owes Redis after an outage."""
    while _unreleased:
        _release(client, *_unreleased[0])
        _unreleased.pop(0)
    for stale in list(_stale_quotas):
        _recount(client, *stale)
        _stale_quotas.discard(stale)


def admit(visit: Visit, form: Form, seen_key: str | None = None, token: str = "") -> Ticket:
    """Rate limit, then monthly limit, in the contract's order; raises ServiceError.

    ``seen_key``: the submission's fingerprint, noted for the duplicate check in the same
    round trip (submissions/spam.py). ``token``: the id the submission will be stored under,
    which names its reservation."""
    owner = form.owner
    ticket = Ticket(owner.pk, current_month(), quota.limit_of(owner), reserved=False,
                    token=token or str(new_id()))
    done, admitted = redis.attempt(
        lambda client: _admit_in_redis(client, form, visit.rate_key, ticket, seen_key),
        "intake admission")
    if done:
        return admitted
    if form_cache.tokens_of(form) is not None:
        form_cache.clear()  # nothing can say whether the kept forms still hold
        raise form_cache.Stale
    _counted_by_the_database(ticket)
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
    done, reserved = redis.attempt(lambda client: _reserve_in_redis(client, ticket),
                                   "a rescue's admission")
    if done:
        return reserved
    _counted_by_the_database(ticket)
    if quota.used(owner.pk, ticket.month) >= ticket.limit:
        raise monthly_limit_reached()
    return ticket


def readmit(ticket: Ticket) -> None:
    """A ticket the record fenced off (its counter was seeded again, or reset, since it was
    admitted): give back what it holds and take a place under the counter as it is now, or
    ``monthly_limit_reached``. Under the same id, so a keyed request keeps its submission.
    Not reserved (checked in the storing transaction) while Redis is away."""
    fenced = ticket.generation
    ticket.release()
    ticket.generation = None
    done, _ticket = redis.attempt(
        lambda client: _reserve_in_redis(client, ticket, fenced=fenced),
        "admitting a fenced submission again")
    if not done:
        _counted_by_the_database(ticket)


def _counted_by_the_database(ticket: Ticket) -> None:
    """Admitted without Redis although it is configured (away, or it failed the call): its
    counter is recounted on the next reach, and the store fences what Redis still holds."""
    if redis.client() is not None:
        _stale_quotas.add((ticket.user_id, ticket.month))
        ticket.fence = True


def _reserve_in_redis(client, ticket: Ticket, fenced: int | None = None) -> Ticket:
    """GATE with its rate limit, form versions and duplicate check off: the quota alone.
    ``fenced``: the generation the record has moved past; a counter still at it (set by a
    seeding whose transaction then failed to commit) is seeded again."""
    user_id, month = ticket.user_id, ticket.month
    quota_key = quota.redis_key(user_id, month)
    keys = [f"{quota_key}:no-rate", quota_key, held_key(user_id, month),
            generation_key(user_id, month), f"{quota_key}:no-version",
            f"{quota_key}:no-version"]
    args = [0, 1, ticket.limit, 0, 1, 0, "", "", ticket.token, HOLD_SECONDS,
            quota.KEY_TTL_SECONDS, "" if fenced is None else fenced]
    answer, generation = _script(client)(keys=keys, args=args)
    if answer == NOT_SEEDED:
        _seed(client, user_id, month)
        answer, generation = _script(client)(keys=keys, args=args)
    _seeded_or_busy(answer)
    if answer == OVER_QUOTA:
        raise monthly_limit_reached()
    ticket.reserved = answer == ADMITTED
    ticket.generation = generation if ticket.reserved else None
    return ticket


def _seeded_or_busy(answer: int) -> None:
    """A counter gone again between its seeding and the retry (a flush, a restart): the
    request is not admitted unreserved past live reservations; the client tries again."""
    if answer == NOT_SEEDED:
        raise database_unavailable()


def _admit_in_redis(
    client, form: Form, address: str, ticket: Ticket, seen_key: str | None
) -> Ticket:
    if _stale_quotas or _unreleased:
        _catch_up(client)
    owner = form.owner
    now = ratelimit.now()
    window = int(now // RATE_WINDOW_SECONDS) * RATE_WINDOW_SECONDS
    rate_key = f"formflow:rate:submit:{form.pk}:{address}:{window}"
    keys = [rate_key, *_quota_keys(owner.pk, ticket.month), *form_cache.version_keys(form),
            *([seen_key] if seen_key else [])]
    tokens = form_cache.tokens_of(form)
    gate = _script(client)
    args = [form.rate_limit, RATE_WINDOW_SECONDS + 1, ticket.limit, 1, DUPLICATE_WINDOW_SECONDS,
            0 if tokens is None else 1, *(tokens or ("", "")), ticket.token, HOLD_SECONDS,
            quota.KEY_TTL_SECONDS, ""]
    answer, generation = gate(keys=keys, args=args)
    if answer == NOT_SEEDED:
        _seed(client, owner.pk, ticket.month)
        args[3] = -1  # counted already
        answer, generation = gate(keys=keys, args=args)
        _seeded_or_busy(answer)
    if answer == STALE:  # checked last: the form may have changed while the quota was seeded
        raise form_cache.Stale
    if answer == RATE_LIMITED:
        raise rate_limited(max(1, math.ceil(window + RATE_WINDOW_SECONDS - now)))
    if answer == OVER_QUOTA:
        raise monthly_limit_reached()
    if seen_key:
        ticket.duplicate = answer == DUPLICATE
    ticket.reserved = answer == ADMITTED
    ticket.generation = generation if ticket.reserved else None
    return ticket
