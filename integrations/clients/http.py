"""All outbound HTTP to user-chosen URLs goes through here.

Fixed timeouts, no redirects, no proxies from the environment, and, unless
WEBHOOK_ALLOW_PRIVATE_NETWORKS is on, a guard that refuses to talk to anything but public
addresses. The guard resolves the host name once, checks every address it has, and connects
to those addresses only, so DNS tricks (rebinding, odd IP spellings such as 0x7f000001)
cannot reach an internal service, not even with a connection that is closed at once.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import threading
import time
from dataclasses import dataclass

import certifi
import urllib3
from django.conf import settings
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, HTTPError, NewConnectionError
from urllib3.exceptions import TimeoutError as Urllib3Timeout
from urllib3.util import connection as urllib3_connection
from urllib3.util import parse_url

from core.infra import wallclock

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
    """Refuse a destination that is not public. The message never names the address: an
    owner reads it (the integration's status, its test), and naming what a host resolved to
    would let any account map internal names."""
    if private_allowed():
        return
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        raise BlockedAddress("the host did not resolve to an IP address") from None
    if not is_public(ip):
        raise BlockedAddress("the host resolves to an address that is not public")


def vetted_addresses(host: str, port: int) -> list[str]:
    """Resolve ``host`` once; every address it has must be public. The connection is then
    made to these addresses only, so DNS cannot answer differently between check and connect
    (rebinding)."""
    try:
        infos = resolve(host, port)
    except OSError as error:
        raise CannotResolve(f"cannot resolve {host}: {error}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for address in addresses:
        check_address(address)
    return addresses


class CannotResolve(Exception):
    pass


def getaddrinfo(*args, **kwargs) -> list:
    """The resolver (tests fake it here, or socket's own)."""
    return socket.getaddrinfo(*args, **kwargs)


def resolve(host: str, port: int) -> list:
    """``getaddrinfo`` for a stream socket, waiting at most until the attempt's deadline;
    CannotResolve past it."""
    try:
        return wallclock.in_time(getaddrinfo, host, port, type=socket.SOCK_STREAM,
                                 default=DEADLINE_SECONDS)
    except TimeoutError:
        raise CannotResolve(f"cannot resolve {host}: no answer in time") from None


class _Pinned:
    """A connection made to the vetted addresses, in the resolver's order, and to nothing
    else. TLS still checks the certificate against the host name, and the Host header is the
    URL's: only the socket's destination is pinned."""

    def _new_conn(self):
        last_error: OSError | None = None
        for address in vetted_addresses(self._dns_host, self.port):
            try:
                sock = urllib3_connection.create_connection(
                    (address, self.port),
                    min(self.timeout, max(0.01, wallclock.left(DEADLINE_SECONDS))),
                    source_address=self.source_address,
                    socket_options=self.socket_options,
                )
                wallclock.watch_socket(sock)  # TLS is set up on it next: cut that too
                return sock
            except TimeoutError as error:
                raise ConnectTimeoutError(self, f"Connection to {self.host} timed out") from error
            except OSError as error:
                last_error = error
        raise NewConnectionError(self, f"Failed to establish a new connection: {last_error}")


class GuardedHTTPConnection(_Pinned, HTTPConnection):
    pass


class GuardedHTTPSConnection(_Pinned, HTTPSConnection):
    pass


class _Watched:
    """A pool that tells the attempt's watchdog which connection it hands out: one kept
    alive from an earlier call has its socket already."""

    def _get_conn(self, timeout=None):
        conn = super()._get_conn(timeout)
        wallclock.watch_holder(conn)
        return conn


class GuardedHTTPConnectionPool(_Watched, HTTPConnectionPool):
    ConnectionCls = GuardedHTTPConnection


class GuardedHTTPSConnectionPool(_Watched, HTTPSConnectionPool):
    ConnectionCls = GuardedHTTPSConnection


class WatchedHTTPConnectionPool(_Watched, HTTPConnectionPool):
    pass


class WatchedHTTPSConnectionPool(_Watched, HTTPSConnectionPool):
    pass


# --- A hard bound on every attempt ---------------------------------------------------------
# urllib3's timeouts are per operation: a read timeout is per recv, so a receiver that sends a
# byte every few seconds (headers or body) or a TLS handshake that trickles never trips one.
# Every call therefore runs under core/infra/wallclock.py's watchdog, which shuts its sockets
# down at the deadline. DNS is bounded in resolve(), connect by its timeout cut to what is left.


def new_pool_manager(*, guarded: bool) -> urllib3.PoolManager:
    """urllib3 (requests' own transport) without requests' per-call session work, which cost
    the delivery worker more than the rest of a delivery; ``post`` goes straight to the host's
    pool, past the manager's own per-call work too. No retries, no redirects, no environment
    proxies; certificates are checked against certifi's roots, as requests does."""
    manager = urllib3.PoolManager(
        num_pools=64,
        maxsize=1,  # one thread uses it
        retries=False,
        cert_reqs="CERT_REQUIRED",
        ca_certs=certifi.where(),
    )
    manager.pool_classes_by_scheme = {
        "http": GuardedHTTPConnectionPool if guarded else WatchedHTTPConnectionPool,
        "https": GuardedHTTPSConnectionPool if guarded else WatchedHTTPSConnectionPool,
    }
    return manager


_pooled = threading.local()


def pool_manager(*, guarded: bool = True) -> urllib3.PoolManager:
    """This thread's pool manager, kept between calls so that deliveries to one host reuse a
    kept-alive connection instead of a new TCP (and TLS) handshake each.

    ``guarded`` is for user-chosen URLs: every new connection is vetted. One is kept per
    setting of WEBHOOK_ALLOW_PRIVATE_NETWORKS, so a connection opened under one never serves
    the other. Unguarded is for the operator's own services (the email provider)."""
    key = (guarded, private_allowed())
    managers = _pooled.__dict__.setdefault("managers", {})
    if key not in managers:
        managers[key] = new_pool_manager(guarded=guarded)
    return managers[key]


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

    from core import clock

    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (moment - clock.now()).total_seconds())


class DeadlinePassed(Exception):
    pass


def read_body(response: urllib3.BaseHTTPResponse, deadline: float) -> tuple[str, bool]:
    """The start of the reply body, read in chunks until the deadline (monotonic clock), and
    whether the whole body was read.

    Streamed, so a huge reply never sits in memory and a slow-drip reply cannot stretch the
    attempt: each chunk waits at most the read timeout, and the clock is checked between them.
    """
    body, whole = _read(response, deadline, BODY_LIMIT)
    charset = _charset(response.headers.get("Content-Type", ""))
    return _decode(body, charset), whole


def _read(response: urllib3.BaseHTTPResponse, deadline: float, limit: int) -> tuple[bytes, bool]:
    body = bytearray()
    for chunk in response.stream(4096):
        body += chunk
        if time.monotonic() > deadline:
            raise DeadlinePassed
        if len(body) >= limit:
            return bytes(body[:limit]), False
    return bytes(body), True


def _charset(content_type: str) -> str | None:
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset":
            return value.strip("'\" ") or None
    return None


def _decode(body: bytes, encoding: str | None) -> str:
    try:
        return body.decode(encoding or "utf-8", errors="replace")
    except LookupError:  # the receiver named a charset Python does not know
        return body.decode("utf-8", errors="replace")


@functools.lru_cache(maxsize=1024)
def _target(url: str) -> tuple[str, str | None, int | None, str]:
    """Scheme, host, port and request target of a URL: parsed once, not on every delivery."""
    parsed = parse_url(url)
    return parsed.scheme or "http", parsed.host, parsed.port, parsed.request_uri


def post(url: str, *, data: bytes, headers: dict[str, str], guarded: bool = True) -> HttpResult:
    """POST once, ended by the deadline whatever the other side does (DNS, connect, TLS,
    headers, body). Never raises for network trouble: the result says what happened."""
    budget = wallclock.budget(DEADLINE_SECONDS)
    with wallclock.bounded(budget) as watch:
        result = _post(url, data, headers, guarded, budget)
    if watch.cut.is_set() and not result.ok:
        return HttpResult(None, f"Timed out after {budget:g} s")
    return result


def _post(url: str, data: bytes, headers: dict[str, str], guarded: bool,
          budget: float) -> HttpResult:
    deadline = time.monotonic() + budget
    timed_out = HttpResult(None, f"Timed out after {budget:g} s")
    response, whole = None, False
    try:
        scheme, host, port, path = _target(url)
        pool = pool_manager(guarded=guarded).connection_from_host(host, port, scheme)
        response = pool.urlopen(
            "POST",
            path,
            body=data,
            headers={"User-Agent": USER_AGENT, **headers},
            timeout=urllib3.Timeout(connect=min(CONNECT_SECONDS, budget), read=budget),
            retries=False,
            redirect=False,
            assert_same_host=False,
            preload_content=False,
        )
        text, whole = read_body(response, deadline)
    except BlockedAddress as error:
        return HttpResult(None, f"Blocked: {error}")
    except NewConnectionError:  # urllib3 files it under timeouts; it is a refusal
        return HttpResult(None, "Connection failed: NewConnectionError")
    except (TimeoutError, Urllib3Timeout, DeadlinePassed):
        return timed_out
    except CannotResolve:
        return HttpResult(None, "Connection failed: NameResolutionError")
    except (HTTPError, OSError, ValueError) as error:
        return HttpResult(None, f"Connection failed: {type(error).__name__}")
    finally:
        if response is not None:
            _let_go(response, whole)
    if time.monotonic() > deadline:
        return timed_out
    problem = None
    if 300 <= response.status < 400:
        problem = f"HTTP {response.status} redirect (redirects are not followed)"
    elif not 200 <= response.status < 300:
        problem = f"HTTP {response.status}"
    retry_after = retry_after_seconds(response.headers.get("Retry-After"))
    return HttpResult(response.status, problem, retry_after, text)


def _let_go(response: urllib3.BaseHTTPResponse, whole: bool) -> None:
    """Back to the pool for the next call if the reply was read to its end; a reply cut short
    (too long, too slow, broken) closes its connection instead."""
    if not whole:
        response.close()
    response.release_conn()


class CallFailed(Exception):
    """No whole reply within the call's budget: timed out, refused, or cut short."""


def call(method: str, url: str, *, body: bytes | None, headers: dict[str, str], budget: float,
         limit: int = 1024 * 1024) -> tuple[int, dict[str, str], bytes]:
    """One request to a service the operator chose (Google's APIs), ended by ``budget``
    whatever the other side does, as ``post`` is: its status, headers and whole body (at most
    ``limit`` bytes). Not guarded: the URL comes from settings, not from a user. CallFailed
    for anything short of a whole reply."""
    if budget <= 0:
        raise CallFailed("Timed out: no time left")
    with wallclock.bounded(budget) as watch:
        try:
            return _call(method, url, body, headers, budget, limit)
        except (HTTPError, OSError, ValueError, DeadlinePassed, CannotResolve) as error:
            if watch.cut.is_set() or isinstance(error, (TimeoutError, Urllib3Timeout,
                                                        DeadlinePassed)):
                raise CallFailed(f"Timed out after {budget:g} s") from None
            raise CallFailed(f"Connection failed: {type(error).__name__}") from None


def _call(method: str, url: str, body: bytes | None, headers: dict[str, str], budget: float,
          limit: int) -> tuple[int, dict[str, str], bytes]:
    deadline = time.monotonic() + budget
    scheme, host, port, path = _target(url)
    pool = pool_manager(guarded=False).connection_from_host(host, port, scheme)
    response = pool.urlopen(
        method, path, body=body, headers=headers,
        timeout=urllib3.Timeout(connect=min(CONNECT_SECONDS, budget), read=budget),
        retries=False, redirect=False, assert_same_host=False, preload_content=False,
    )
    whole = False
    try:
        content, whole = _read(response, deadline, limit)
    finally:
        _let_go(response, whole)
    if not whole:
        raise CallFailed(f"Reply longer than {limit} bytes")
    return response.status, dict(response.headers), content
