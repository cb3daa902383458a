from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    """REMOTE_ADDR, or the N-th X-Forwarded-For address from the right behind N proxies."""
    count = settings.TRUSTED_PROXY_COUNT
    if count:
        chain = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        chain = [part for part in chain if part]
        if len(chain) >= count:
            return chain[-count]
    return request.META.get("REMOTE_ADDR", "")


def rate_key(ip: str) -> str:
    """What per-address limits count: the address, or for IPv6 its /64, which one client
    usually holds whole (counting single IPv6 addresses would let it rotate freely)."""
    import ipaddress

    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/64", strict=False))
