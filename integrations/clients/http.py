"""All outbound HTTP to user-chosen URLs goes through here.

Fixed timeouts, no redirects, no proxies from the environment, and, unless
WEBHOOK_ALLOW_PRIVATE_NETWORKS is on, a guard that refuses to talk to anything but public
addresses. The guard checks every address the host name resolves to, and then the address
the socket actually connected to, so DNS tricks (rebinding, odd IP spellings such as
0x7f000001) cannot reach an internal service.
"""

from __future__ import annotations

import contextlib
import contextvars
import ipaddress
import socket
import threading
import time
from dataclasses import dataclass

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ReadTimeoutError

CONNECT_SECONDS = 5.0
DEADLINE_SECONDS = 10.0  # the contract: success is a 2xx within 10 s of sending
BODY_LIMIT = 64 * 1024  # bytes of a reply worth reading; only the start is ever shown
USER_AGENT = "FormFlow-Webhooks/1.0"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
NAT64 = ipaddress.ip_network("64:ff9b::/96")
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
CGNAT = ipaddress.ip_network("100.64.0.0/10")
METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
# Not public, though some Python versions' is_global says otherwise: deprecated IPv6 site-local
# addresses, and IANA's IPv4 special-purpose block.
NOT_PUBLIC = [ipaddress.ip_network("fec0::/10"), ipaddress.ip_network("192.0.0.0/24")]


class BlockedAddress(Exception):
    """The destination is not a public address.

    Deliberately not an OSError: urllib3 would wrap that into a generic connection error.
    """


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4, Teredo), if any."""
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip in NAT64 or ip in NAT64_LOCAL:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour:
        return ip.sixtofour
    if ip.teredo:
        return ip.teredo[1]
    return None


def is_public(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return False
        inner = embedded_ipv4(ip)
        if inner is not None:
            return is_public(inner)
    if ip in METADATA or (ip.version == 4 and ip in CGNAT):
        return False
    if any(ip.version == network.version and ip in network for network in NOT_PUBLIC):
        return False
    return ip.is_global and not (
        ip.is_multicast
        or ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_unspecified
    )


def private_allowed() -> bool:
    return settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS


def check_address(address: str) -> None:
    if private_allowed():
        return
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        raise BlockedAddress(f"{address} is not an IP address") from None
    if not is_public(ip):
        raise BlockedAddress(f"{ip} is not a public address")


def check_host(host: str, port: int) -> None:
    """Every address the host resolves to must be public."""
    if private_allowed():
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise requests.ConnectionError(f"cannot resolve {host}: {error}") from None
    for info in infos:
        check_address(info[4][0])


class _Guard:
    def _new_conn(self):
        check_host(self._dns_host, self.port)
        sock = super()._new_conn()
        try:
            check_address(sock.getpeername()[0])
        except BlockedAddress:
            sock.close()
            raise
        return sock


class GuardedHTTPConnection(_Guard, HTTPConnection):
    pass


class GuardedHTTPSConnection(_Guard, HTTPSConnection):
    pass


class GuardedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = GuardedHTTPConnection


class GuardedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = GuardedHTTPSConnection


class GuardedAdapter(HTTPAdapter):
    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": GuardedHTTPConnectionPool,
            "https": GuardedHTTPSConnectionPool,
        }


def guarded_session() -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # an environment proxy would hide the real destination
    adapter = GuardedAdapter(max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = USER_AGENT
    return session


_pooled = threading.local()


def pooled_session() -> requests.Session:
    """This thread's guarded session, kept between calls so that deliveries to one host reuse
    a kept-alive connection instead of a new TCP (and TLS) handshake each. Every new
    connection is still checked by the guard; a session is kept per setting of
    WEBHOOK_ALLOW_PRIVATE_NETWORKS, so a connection opened under one never serves the other."""
    key = private_allowed()
    sessions = _pooled.__dict__.setdefault("sessions", {})
    if key not in sessions:
        sessions[key] = guarded_session()
    return sessions[key]


@dataclass(frozen=True)
class HttpResult:
    status_code: int | None
    error: str | None
    retry_after: float | None = None
    body: str = ""

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    from config import clock

    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (moment - clock.now()).total_seconds())


class DeadlinePassed(Exception):
    pass


def read_body(response: requests.Response, deadline: float) -> str:
    """The start of the reply body, read in chunks until the deadline (monotonic clock).

    Streamed, so a huge reply never sits in memory and a slow-drip reply cannot stretch the
    attempt: each chunk waits at most the read timeout, and the clock is checked between them.
    """
    body = bytearray()
    try:
        for chunk in response.iter_content(4096):
            body += chunk
            if time.monotonic() > deadline:
                raise DeadlinePassed
            if len(body) >= BODY_LIMIT:
                break
    except requests.ConnectionError as error:
        # requests reports a read timeout inside the body as a ConnectionError.
        if isinstance(error.args[0] if error.args else None, ReadTimeoutError):
            raise DeadlinePassed from None
        raise
    return _decode(bytes(body[:BODY_LIMIT]), response.encoding)


def _decode(body: bytes, encoding: str | None) -> str:
    try:
        return body.decode(encoding or "utf-8", errors="replace")
    except LookupError:  # the receiver named a charset Python does not know
        return body.decode("utf-8", errors="replace")


_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)


@contextlib.contextmanager
def deadline(seconds: float):
    """Calls made inside wait at most ``seconds`` for the whole reply (a test send: 5 s)."""
    token = _deadline.set(seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def post(
    session: requests.Session, url: str, *, data: bytes, headers: dict[str, str]
) -> HttpResult:
    """POST once. Never raises for network trouble: the result says what happened."""
    budget = _deadline.get() or DEADLINE_SECONDS
    deadline = time.monotonic() + budget
    timed_out = HttpResult(None, f"Timed out after {budget:g} s")
    try:
        with session.post(
            url,
            data=data,
            headers=headers,
            timeout=(min(CONNECT_SECONDS, budget), budget),
            allow_redirects=False,
            stream=True,
        ) as response:
            text = read_body(response, deadline)
    except BlockedAddress as error:
        return HttpResult(None, f"Blocked: {error}")
    except (requests.Timeout, DeadlinePassed):
        return timed_out
    except requests.RequestException as error:
        return HttpResult(None, f"Connection failed: {type(error).__name__}")
    if time.monotonic() > deadline:
        return timed_out
    error = None
    if 300 <= response.status_code < 400:
        error = f"HTTP {response.status_code} redirect (redirects are not followed)"
    elif not 200 <= response.status_code < 300:
        error = f"HTTP {response.status_code}"
    retry_after = retry_after_seconds(response.headers.get("Retry-After"))
    return HttpResult(response.status_code, error, retry_after, text)
