"""The SMTP backend every email leaves through (EMAIL_BACKEND when EMAIL_HOST is set): account
codes and alerts, and the owner's notifications and digests, which are delivery attempts.

Django's backend bounds each socket operation by EMAIL_TIMEOUT, so a relay that answers a byte
every few seconds (its greeting, the reply after DATA, a TLS handshake) or a name lookup that
never answers could hold one send for minutes: past a delivery's 20 s lease another worker
would send the same email again, and a request sending mail inline would outlive its 30 s.
Here one send (lookup, connect, TLS, login, the message, QUIT) runs under the same wall-clock
watchdog as the HTTP clients (core/infra/wallclock.py): past SECONDS its socket is shut down
and the send fails with a TimeoutError, which callers retry.
"""

from __future__ import annotations

import smtplib
import socket

from django.core.mail.backends.smtp import EmailBackend
from django.core.mail.utils import DNS_NAME

from core.infra import wallclock

SECONDS = 10.0  # a delivery attempt's deadline (the contract's 10 s), half its lease


class _BoundedSMTP(smtplib.SMTP):
    def _get_socket(self, host, port, timeout):
        """socket.create_connection, with the lookup bounded and the socket watched."""
        infos = wallclock.in_time(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM,
                                  default=SECONDS)
        error: OSError = OSError(f"cannot resolve {host}")
        per_read = timeout if isinstance(timeout, int | float) else SECONDS  # None: unset
        for family, kind, proto, _name, address in infos:
            sock = socket.socket(family, kind, proto)
            try:
                wallclock.watch_socket(sock)
                sock.settimeout(min(per_read, max(0.01, wallclock.left(SECONDS))))
                if self.source_address:
                    sock.bind(self.source_address)
                sock.connect(address)
                return sock
            except OSError as failed:
                error = failed
                sock.close()
        raise error


class _BoundedSMTPSSL(smtplib.SMTP_SSL, _BoundedSMTP):
    """SMTP_SSL wraps what _BoundedSMTP connects."""


class BoundedEmailBackend(EmailBackend):
    @property
    def connection_class(self):
        return _BoundedSMTPSSL if self.use_ssl else _BoundedSMTP

    def send_messages(self, email_messages):
        budget = wallclock.budget(SECONDS)
        with wallclock.bounded(budget) as watch:
            try:
                wallclock.in_time(DNS_NAME.get_fqdn, default=budget)  # open() needs it
                return super().send_messages(email_messages)
            except OSError:
                if watch.cut.is_set():
                    raise TimeoutError(f"Timed out after {budget:g} s") from None
                raise
