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
from config import ratelimit, redis
from config.errors import ServiceError, retry_later
from forms_app import form_cache
from forms_app.models import Form
from submissions.spam import DUPLICATE_WINDOW_SECONDS
from submissions.visit import Visit

RATE_WINDOW_SECONDS = 60

# KEYS: rate counter, quota counter, the version tokens of the form and of its owner, and the
# submission's fingerprint for the spam filter's duplicate check (or none). ARGV: rate limit,
# window seconds, monthly limit, whether to count the rate (not when retrying after seeding
# the quota), seconds a fingerprint is kept, whether the form is a kept copy, and the tokens
# it was read under.
# Answers: 0 admitted (one submission reserved), 1 rate limited, 2 quota not seeded, 3 over
# quota, 4 admitted as a duplicate (held by the filter, so nothing reserved), 5 the kept form
# is stale (nothing counted).
GATE = """
if ARGV[6] == '1' and (redis.call('GET', KEYS[3]) ~= ARGV[7]
                       or redis.call('GET', KEYS[4]) ~= ARGV[8]) then
  return 5
end
if ARGV[4] == '1' then
  local hits = redis.call('INCR', KEYS[1])
  if hits == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
  if hits > tonumber(ARGV[1]) then return 1 end
end
local used = redis.call('GET', KEYS[2])
if not used then return 2 end
if tonumber(used) >= tonumber(ARGV[3]) then return 3 end
if KEYS[5] and not redis.call('SET', KEYS[5], 1, 'NX', 'EX', ARGV[5]) then return 4 end
redis.call('INCR', KEYS[2])
return 0
"""
ADMITTED, RATE_LIMITED, NOT_SEEDED, OVER_QUOTA, DUPLICATE, STALE = 0, 1, 2, 3, 4, 5


def monthly_limit_reached() -> ServiceError:
    return ServiceError(
        "monthly_limit_reached",
        "This form's account has used its monthly submission limit.",
        status_code=403,
    )


def rate_limited(retry_after: int) -> ServiceError:
    return retry_later("rate_limited", "Too many requests. Try again later.", retry_after)


@functools.cache
def _script(client):
    return client.register_script(GATE)


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

    def release(self) -> None:
        """Give the reservation back: nothing was stored."""
        client = redis.client()
        if self.reserved and client is not None:  # only Redis reserves
            self.reserved = False
            key = quota.redis_key(self.user_id, self.month)
            try:
                client.decr(key)
            except redis.Unavailable as error:
                redis.failed(error, "giving a reservation back")
                _stale_quota_keys.add(key)  # counts one too many: seed it again


# Quota counters this process let go stale while Redis was away; dropped on its next reach.
_stale_quota_keys: set[str] = set()


def recount(user_id, month: date) -> None:
    """After a count made outside admission (a rescue from the spam folder): drop the Redis
    counter, which the next admission seeds again from the database's record."""
    client = redis.client()
    if client is None:
        return
    key = quota.redis_key(user_id, month)
    try:
        client.delete(key)
    except redis.Unavailable as error:
        redis.failed(error, "recounting a quota")
        _stale_quota_keys.add(key)


def admit(visit: Visit, form: Form, seen_key: str | None = None) -> Ticket:
    """Rate limit, then monthly limit, in the contract's order; raises ServiceError.

    ``seen_key``: the submission's fingerprint, noted for the duplicate check in the same
    round trip (submissions/spam.py)."""
    owner = form.owner
    ticket = Ticket(owner.pk, current_month(), quota.limit_of(owner), reserved=False)
    client = redis.client()
    if client is not None and redis.available():
        try:
            return _admit_in_redis(client, form, visit.rate_key, ticket, seen_key)
        except redis.Unavailable as error:
            redis.failed(error, "intake admission")
    if form_cache.tokens_of(form) is not None:
        form_cache.clear()  # nothing can say whether the kept forms still hold
        raise form_cache.Stale
    if client is not None:
        _stale_quota_keys.add(quota.redis_key(owner.pk, ticket.month))
    # Without Redis, or while it is away: the cache's window, which is then this process's.
    ratelimit.enforce(f"submit:{form.pk}", visit.rate_key, form.rate_limit)
    if quota.used(owner.pk, ticket.month) >= ticket.limit:
        raise monthly_limit_reached()
    return ticket  # the quota is checked again inside the storing transaction


def _admit_in_redis(
    client, form: Form, address: str, ticket: Ticket, seen_key: str | None
) -> Ticket:
    if _stale_quota_keys:
        stale = _stale_quota_keys.copy()
        client.delete(*stale)
        _stale_quota_keys.difference_update(stale)
    owner = form.owner
    now = ratelimit.now()
    window = int(now // RATE_WINDOW_SECONDS) * RATE_WINDOW_SECONDS
    rate_key = f"formflow:rate:submit:{form.pk}:{address}:{window}"
    keys = [rate_key, quota.redis_key(owner.pk, ticket.month), *form_cache.version_keys(form),
            *([seen_key] if seen_key else [])]
    tokens = form_cache.tokens_of(form)
    gate = _script(client)
    args = [form.rate_limit, RATE_WINDOW_SECONDS + 1, ticket.limit, 1, DUPLICATE_WINDOW_SECONDS,
            0 if tokens is None else 1, *(tokens or ("", ""))]
    answer = gate(keys=keys, args=args)
    if answer == NOT_SEEDED:
        client.set(keys[1], quota.used(owner.pk, ticket.month), nx=True, ex=quota.KEY_TTL_SECONDS)
        args[3] = 0
        answer = gate(keys=keys, args=args)
    if answer == STALE:  # checked last: the form may have changed while the quota was seeded
        raise form_cache.Stale
    if answer == RATE_LIMITED:
        raise rate_limited(max(1, math.ceil(window + RATE_WINDOW_SECONDS - now)))
    if answer == OVER_QUOTA:
        raise monthly_limit_reached()
    if seen_key:
        ticket.duplicate = answer == DUPLICATE
    ticket.reserved = answer == ADMITTED
    return ticket
