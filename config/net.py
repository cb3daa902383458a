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
