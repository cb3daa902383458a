"""Admission counted in Redis: one script per request (rate, versions, duplicate, quota),
the quota's reservations, generations and seeding. The module docstring of
submissions/intake/admission/__init__.py tells the protocol.

A call that finds Redis away goes through ``redis.attempt`` (core/infra/redis.py), which
answers "not done": the caller then counts in the database, and what this process owes the
counters is paid at its next reach (``_catch_up``).
"""

from __future__ import annotations

import functools
import math
from datetime import date

from accounts import quota
from core.errors import database_unavailable
from core.infra import ratelimit, redis
from forms_app import form_cache
from forms_app.models import Form
from submissions.intake.admission.ticket import Ticket, monthly_limit_reached, rate_limited
from submissions.intake.spam import DUPLICATE_WINDOW_SECONDS
from submissions.models import Status, Submission

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


def _release(client, user_id, month: date, token: str) -> None:
    keys = [quota.redis_key(user_id, month), held_key(user_id, month)]
    _script(client, RELEASE)(keys=keys, args=[token])


# While Redis was away: the quotas this process counted in the database only (recounted on
# its next reach), and the reservations it could not give back (given back then).
_stale_quotas: set[tuple[object, date]] = set()
_unreleased: list[tuple[object, date, str]] = []


def _recount(client, user_id, month: date) -> int:
    """Read in this order so that a race counts a submission twice, never not at all: the
    live reservations, which of them are stored, then the record."""
    keys = _quota_keys(user_id, month)
    held = [token.decode() for token in _script(client, LIVE)(keys=keys[1:2])]
    stored = _stored_among(held)
    recorded, generation = quota.used_under(user_id, month)
    args = [recorded, quota.KEY_TTL_SECONDS, str(generation), *stored]
    return int(_script(client, RECOUNT)(keys=keys, args=args))


def _seed(client, user_id, month: date, fenced: int | None = None) -> None:
    """A missing counter (or one the record has moved past): the record moves to a new
    generation and is read under it, and the counter is set while the record is locked; from
    then on nothing admitted before can store. Requests that found no counter at the same
    moment queue on the record's locks; the first seeds, and the others find its counter and
    leave it be (each seeding would fence off what the one before admitted).

    A request that finds a counter already there (of another generation than ``fenced``, the
    one the record has moved past) leaves at once, without the locks: in a burst at a month's
    start, every request queued on them in turn, and past the lock bound the last got 503."""
    seeded, generation = _counter_in_redis(client, user_id, month)
    if seeded and generation != fenced:
        return
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
        _seed(client, user_id, month, fenced)
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
    owner = form.counted_on
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


class InRedis:
    """The counter in Redis, the database standing in while Redis is away."""

    def admit(self, visit_rate_key: str, form: Form, ticket: Ticket,
              seen_key: str | None) -> bool:
        """Counted and reserved in Redis (True), or not done: Redis is away."""
        done, _ticket = redis.attempt(
            lambda client: _admit_in_redis(client, form, visit_rate_key, ticket, seen_key),
            "intake admission")
        return done

    def reserve(self, ticket: Ticket, fenced: int | None = None) -> bool:
        done, _ticket = redis.attempt(
            lambda client: _reserve_in_redis(client, ticket, fenced=fenced),
            "a reservation")
        return done

    def release(self, ticket: Ticket) -> None:
        """Only what this request holds; while Redis is away, at its next reach."""
        if not ticket.reserved:
            return
        ticket.reserved = False
        token = (ticket.user_id, ticket.month, ticket.token)
        done, _ = redis.attempt(lambda client: _release(client, *token),
                                "giving a reservation back")
        if not done:
            _unreleased.append(token)

    def recount(self, user_id, month: date) -> None:
        done, _ = redis.attempt(lambda client: _recount(client, user_id, month),
                                "recounting a quota")
        if not done:
            _stale_quotas.add((user_id, month))

    def reset(self, record: quota.LockedMonth, user_id, month: date) -> None:
        client = redis.client()
        record.move_on(_counter_in_redis(client, user_id, month)[1], reset=True)
        _publish(client, user_id, month, record.generation, recorded=0)

    def counted_by_the_database(self, ticket: Ticket) -> None:
        """Admitted without Redis although it is configured (away, or it failed the call): its
        counter is recounted on the next reach, and the store fences what Redis still
        holds."""
        _stale_quotas.add((ticket.user_id, ticket.month))
        ticket.fence = True
