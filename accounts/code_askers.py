"""Who asked for an address's emailed code, kept alike for every address, account or not.

Wrong codes from strangers are capped per address (services._use_code); the clients that
asked for the code are let past that cap, so that no stranger's guesses stop the owner. What
tells them apart must not depend on whether the address has an account: were it read from the
account's code, a stranger who asked could count its answers (400 past the cap, against 429
for an address with no account) and learn which addresses have one. So asks are recorded here,
in the request, for every address, under a digest of it:

- The client whose ask opens a send window (no ask in the last minute, fewer than 5 this
  hour; background.py sends a code at most that often) is the code's *sender*: past the cap
  it may still use the code, with its own 5 tries of each code it caused to be sent. Each of
  those codes costs the owner an email, 5 an hour at most.
- A client that asks inside the window (nothing is sent: the owner's inbox holds the code
  already) is an *asker*. Askers may go past the cap too, but share 5 wrong tries an hour per
  address among them: any number of client addresses asking buys no more guesses.

The state lives in the cache (Redis when configured) for the code's lifetime. While Redis is
away nobody counts as having asked: the cap then applies to everyone but device cookies."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache

from core import clock
from core.infra import ratelimit, redis

# A little under background.py's 60 s, so an ask it sends for is a sender's.
SEND_WINDOW_SECONDS = 55
SENDS_PER_HOUR = 5
ASKERS_TRIES_PER_HOUR = 5
SENDER, ASKER, NOBODY = "sender", "asker", ""


def _key(email: str, purpose: str) -> str:
    return f"code-ask:{purpose}:{hashlib.sha256(email.encode()).hexdigest()[:32]}"


def asked(email: str, purpose: str, client: str) -> None:
    """``client`` asked for a code for ``email`` (sign-up, resend, forgot-password)."""
    if not client:
        return
    key = _key(email, purpose)
    lifetime = int(settings.OTP_LIFETIME.total_seconds())
    now = clock.now().timestamp()

    def record() -> None:
        # Read, then written: two asks in one instant may both count as senders, which costs
        # one more code's 5 tries at most.
        state = cache.get(key) or {}
        sends = [moment for moment in state.get("sends", []) if now - moment < 3600]
        # Every sender of a live code stays one: a later ask, a stranger's included, opening
        # a window of its own must not take that standing from the client that got a code.
        senders = [[who, when] for who, when in state.get("senders", []) if now - when < lifetime]
        if len(sends) < SENDS_PER_HOUR and (not sends or now - sends[-1] >= SEND_WINDOW_SECONDS):
            cache.set(key, {"sends": [*sends, now], "senders": [*senders, [client, now]]}, 3600)
        elif client not in {who for who, _when in senders}:
            cache.set(f"{key}:asker:{client}", 1, lifetime)

    redis.guarded(record, None, "code askers")


def role(email: str, purpose: str, client: str) -> str:
    """SENDER, ASKER or NOBODY: what ``client``'s asks for ``email``'s code make it now."""
    if not client:
        return NOBODY
    key = _key(email, purpose)
    lifetime = settings.OTP_LIFETIME.total_seconds()

    def read() -> str:
        state = cache.get(key) or {}
        now = clock.now().timestamp()
        if any(who == client and now - when < lifetime
               for who, when in state.get("senders", [])):
            return SENDER
        return ASKER if cache.get(f"{key}:asker:{client}") else NOBODY

    return redis.guarded(read, NOBODY, "code askers")


def askers_tries(email: str, purpose: str) -> ratelimit.Window:
    """The wrong tries askers share past the strangers' cap, this hour."""
    return ratelimit.Window(f"{_key(email, purpose)}:askers-wrong", 3600)
