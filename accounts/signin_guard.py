"""Failed sign-ins, counted so that no stranger can turn them into a lockout (OWASP's device
cookies), across every sign-in surface (API login and token, the dashboard's and the admin's
sign-in pages):

- per (address, client): past 10 failures in 15 minutes that pair answers 429. A client with
  the address's device cookie counts as its device, not its network address, so a stranger
  behind the same address cannot lock the owner's device out either;
- per address, from all clients together: past 100 failures in an hour only clients with the
  address's device cookie may sign in (others 429), and the owner is emailed once.
"""

from __future__ import annotations

import hashlib

from accounts import mails
from accounts.device import Client
from accounts.models import User, normalize_email
from core.errors import ServiceError, retry_later
from core.infra import broker, ratelimit

MAX_FAILURES = 10
WINDOW_SECONDS = 15 * 60
ADDRESS_MAX_FAILURES = 100
ADDRESS_WINDOW_SECONDS = 60 * 60


def _digest(email: str) -> str:
    return hashlib.sha256(normalize_email(email).encode()).hexdigest()[:32]


def _pair(email: str, client: Client, user: User | None) -> ratelimit.Window:
    device = client.device_id(user)
    who = f"device:{device}" if device else client.address
    return ratelimit.Window(f"signin-failed:{_digest(email)}:{who}", WINDOW_SECONDS)


def _address(email: str) -> ratelimit.Window:
    return ratelimit.Window(f"signin-failed-all:{_digest(email)}", ADDRESS_WINDOW_SECONDS)


def too_many_attempts(retry_after: int) -> ServiceError:
    return retry_later(
        "too_many_attempts", "Too many failed sign-ins for this address. Try again later.",
        retry_after,
    )


def check(email: str, client: Client, user: User | None) -> None:
    """Raise 429 while this client may not try this address."""
    pair = _pair(email, client, user)
    if pair.count() >= MAX_FAILURES:
        raise too_many_attempts(pair.retry_after())
    address = _address(email)
    if address.count() >= ADDRESS_MAX_FAILURES and client.device_id(user) is None:
        raise too_many_attempts(address.retry_after())


def failed(email: str, client: Client, user: User | None) -> None:
    _pair(email, client, user).add()
    address = _address(email)
    if address.add() >= ADDRESS_MAX_FAILURES and user is not None:
        _alert_once(user)


def _alert_once(user: User) -> None:
    """Tell the owner, once in the window, that only their own devices may sign in for now."""
    alerts = ratelimit.Window(f"signin-alerted:{_digest(user.email)}", ADDRESS_WINDOW_SECONDS)
    if alerts.add() == 1:
        task = mails.send_sign_in_alert
        broker.publish(lambda: task.apply_async((str(user.pk),), retry=False), task.name)
