"""The one client for the CAPTCHA providers' siteverify APIs.

reCAPTCHA, hCaptcha and Turnstile take the same form-encoded ``secret``, ``response`` and
``remoteip`` and answer ``{"success": bool}``; they differ in the field the widget adds to the
form and in the address that verifies it (``*_VERIFY_URL``).

TIMEOUT_SECONDS bounds the whole call by the wall clock: name resolution, connect, TLS, the
headers and the body, however slowly the provider sends them (a byte every 1.5 s never trips a
per-read timeout). The call runs on a worker thread; past the bound the request answers 422 at
once and the worker's socket is shut, so the worker ends too (a name lookup still running ends
on its own resolver timeout, with nothing waiting on it).
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as Timeout
from typing import NamedTuple

import certifi
import urllib3
from django.conf import settings
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

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
    call = _Call(url, {"secret": secret, "response": token, "remoteip": remote_ip})
    running = _workers.submit(call.run)
    try:
        return running.result(timeout=TIMEOUT_SECONDS)
    except Timeout:
        call.abort()
        logger.warning("%s verification took over %ss: failed", provider, TIMEOUT_SECONDS)
        return False
    except (urllib3.exceptions.HTTPError, OSError, ValueError, AttributeError) as error:
        logger.warning("%s verification failed: %s", provider, error)
        return False


# Calls past their bound still hold a worker until their socket is shut; a bounded pool
# keeps a burst of them from holding more.
_workers = ThreadPoolExecutor(max_workers=16, thread_name_prefix="captcha")
_current = threading.local()


class _Call:
    """One verification, and the sockets it opened, to shut them when it is given up."""

    def __init__(self, url: str, fields: dict[str, str]) -> None:
        self.url, self.fields = url, fields
        self.sockets: list[socket.socket] = []
        self.abandoned = threading.Event()

    def run(self) -> bool:
        _current.call = self
        try:
            manager = urllib3.PoolManager(num_pools=1, maxsize=1, retries=False,
                                          ca_certs=certifi.where())
            manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
            response = manager.request(
                "POST", self.url, fields=self.fields, encode_multipart=False,
                timeout=urllib3.Timeout(total=TIMEOUT_SECONDS), redirect=False,
            )
            manager.clear()
        finally:
            _current.call = None
        if not 200 <= response.status < 300:
            return False
        return json.loads(response.data).get("success") is True

    def opened(self, sock: socket.socket) -> None:
        self.sockets.append(sock)
        if self.abandoned.is_set():
            self.abort()

    def abort(self) -> None:
        self.abandoned.set()
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _Tracked:
    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        call = getattr(_current, "call", None)
        if call is not None:
            call.opened(self.sock)  # type: ignore[attr-defined]


class _HTTPConnection(_Tracked, HTTPConnection):
    pass


class _HTTPSConnection(_Tracked, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection
