"""Who is asking: the client address (IPv6 per /64) and, if it has one, the device cookie
``ff_device`` that a successful sign-in leaves (OWASP's device cookies). Limits count per
client, so a stranger's failures elsewhere never lock an owner out, and a device the owner
signed in from before is let in even while an address is under attack from everywhere."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse

from accounts.models import User
from core.net import client_ip, rate_key

COOKIE_NAME = "ff_device"
LIFETIME = timedelta(days=365)
SALT = "accounts.device"


@dataclass(frozen=True)
class Client:
    address: str  # what per-address limits count: the IP, or its /64
    device: str = ""  # the raw ff_device cookie, if any

    @classmethod
    def of(cls, request: HttpRequest) -> Client:
        return cls(rate_key(client_ip(request)), request.COOKIES.get(COOKIE_NAME, ""))

    def device_id(self, user: User | None) -> str | None:
        """This device's id if its cookie is genuine, unexpired and bound to ``user``."""
        if user is None or not self.device:
            return None
        try:
            value = signing.loads(self.device, salt=SALT, max_age=LIFETIME)
        except signing.BadSignature:
            return None
        if not isinstance(value, dict) or value.get("u") != str(user.pk):
            return None
        return str(value.get("d", ""))


def remember(response: HttpResponse, user: User) -> None:
    """After a successful sign-in: this browser is a device the account's owner uses."""
    value = signing.dumps({"u": str(user.pk), "d": secrets.token_urlsafe(12)}, salt=SALT)
    response.set_cookie(
        COOKIE_NAME,
        value,
        max_age=int(LIFETIME.total_seconds()),
        httponly=True,
        secure=settings.AUTH_COOKIE_SECURE,
        samesite="Lax",
        path="/",
    )
