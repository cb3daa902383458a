"""The one client for the CAPTCHA providers' siteverify APIs.

reCAPTCHA, hCaptcha and Turnstile take the same form-encoded ``secret``, ``response`` and
``remoteip`` and answer ``{"success": bool}``; they differ in the field the widget adds to the
form and in the address that verifies it (``*_VERIFY_URL``).

TIMEOUT_SECONDS bounds the whole call by the wall clock: name resolution, connect, TLS, the
headers and the body, however slowly the provider sends them (a byte every 1.5 s never trips a
per-read timeout). The call runs under core/infra/wallclock.py, as every outbound call does:
past the bound its socket is shut down and the request answers 422 at once; a name lookup is
waited for only until the bound (it ends on its own resolver timeout, with nothing waiting on
it).
"""

from __future__ import annotations

import json
import logging
import socket
from typing import NamedTuple

import certifi
import urllib3
from django.conf import settings
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.util import connection as urllib3_connection

from core.infra import wallclock

logger = logging.getLogger(__name__)
TIMEOUT_SECONDS = 5


class Provider(NamedTuple):
    token_field: str
    verify_url_setting: str


PROVIDERS = {
    "recaptcha": Provider("g-recaptcha-response", "RECAPTCHA_VERIFY_URL"),
    "hcaptcha": Provider("h-captcha-response", "HCAPTCHA_VERIFY_URL"),
    "turnstile": Provider("cf-turnstile-response", "TURNSTILE_VERIFY_URL"),
}
DEFAULT_PROVIDER = "recaptcha"
# Never stored, whichever provider the form uses: a page may still carry another widget.
TOKEN_FIELDS = frozenset(provider.token_field for provider in PROVIDERS.values())


def token_field(provider: str) -> str:
    return PROVIDERS[provider].token_field


def verify(*, provider: str, secret: str, token: str, remote_ip: str) -> bool:
    """True only when the provider says the token is valid; unreachable or slower than
    TIMEOUT_SECONDS in all counts as failed."""
    if not token:
        return False
    url = getattr(settings, PROVIDERS[provider].verify_url_setting)
    fields = {"secret": secret, "response": token, "remoteip": remote_ip}
    with wallclock.bounded(TIMEOUT_SECONDS) as watch:
        try:
            return _ask(url, fields)
        except (urllib3.exceptions.HTTPError, OSError, ValueError, AttributeError) as error:
            if watch.cut.is_set() or isinstance(error, TimeoutError):
                logger.warning("%s verification took over %ss: failed", provider,
                               TIMEOUT_SECONDS)
            else:
                logger.warning("%s verification failed: %s", provider, error)
            return False


def _ask(url: str, fields: dict[str, str]) -> bool:
    manager = urllib3.PoolManager(num_pools=1, maxsize=1, retries=False,
                                  ca_certs=certifi.where())
    manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
    try:
        response = manager.request(
            "POST", url, fields=fields, encode_multipart=False,
            timeout=urllib3.Timeout(total=TIMEOUT_SECONDS), redirect=False,
        )
    finally:
        manager.clear()
    if not 200 <= response.status < 300:
        return False
    return json.loads(response.data).get("success") is True


class _Watched:
    """A connection whose name lookup waits no longer than the call has left (urllib3's own
    has no timeout), and whose socket the watchdog shuts down at the deadline, TLS on it
    included."""

    def _new_conn(self) -> socket.socket:
        host, port = self._dns_host, self.port  # type: ignore[attr-defined]
        infos = wallclock.in_time(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM,
                                  default=TIMEOUT_SECONDS)
        error: OSError = OSError(f"cannot resolve {host}")
        for *_, address in infos:
            try:
                sock = urllib3_connection.create_connection(
                    (str(address[0]), port), max(0.01, wallclock.left(TIMEOUT_SECONDS)),
                    source_address=self.source_address,  # type: ignore[attr-defined]
                    socket_options=self.socket_options,  # type: ignore[attr-defined]
                )
            except OSError as failed:
                error = failed
                continue
            wallclock.watch_socket(sock)
            return sock
        raise error


class _HTTPConnection(_Watched, HTTPConnection):
    pass


class _HTTPSConnection(_Watched, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection
