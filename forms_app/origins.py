"""Web origins (scheme://host[:port]) as browsers send them in Origin and Referer."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator

DEFAULT_PORTS = {"http": 80, "https": 443}

# What an owner may list in allowedOrigins, written once for the validator and the OpenAPI
# schema (which takes it from the validator). It is what browsers send in Origin: a lowercase
# http(s) scheme, an ASCII host (a name, IPv4, or a bracketed IPv6 address without a zone) and
# a port from 1 to 65535, with nothing after it but an optional "/". Plain ECMA-262 syntax, so
# schema tools read it as the server does.
_LABEL = "[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
_HEX = "[0-9A-Fa-f]{1,4}"
_IPV6 = "|".join([
    f"({_HEX}:){{7}}{_HEX}",
    f"({_HEX}:){{1,7}}:",
    *(f"({_HEX}:){{1,{7 - tail}}}(:{_HEX}){{{tail}}}" for tail in range(1, 7)),
    f":((:{_HEX}){{1,7}}|:)",
])
_PORT = "([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
_ORIGIN = f"https?://({_LABEL}(\\.{_LABEL})*|\\[({_IPV6})\\])(:{_PORT})?"
ORIGIN_PATTERN = f"^{_ORIGIN}/?$"
# An absolute http(s) URL, such as a form's redirect: an origin, then any path, query and
# fragment without spaces or control characters (a browser needs those percent-encoded).
URL_PATTERN = f"^{_ORIGIN}([/?#][^\\u0000- \\u007f]*)?$"



class SchemaPatternValidator(RegexValidator):
    """A RegexValidator that reads its pattern as JSON Schema does: Python's ``$`` also
    matches before a final newline, ECMA-262's does not, so the whole value must match."""

    def __call__(self, value: object) -> None:
        if not re.fullmatch(self.regex, str(value)):
            raise ValidationError(self.message, code=self.code, params={"value": value})


origin_validator = SchemaPatternValidator(
    ORIGIN_PATTERN, "Not an origin: scheme://host[:port] with http or https and no path."
)
url_validator = SchemaPatternValidator(
    URL_PATTERN, "Enter an absolute http(s) URL, without spaces (percent-encode them)."
)


def normalize_origin(value: str) -> str | None:
    """The canonical form of an origin, or None when ``value`` is not one."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port and port != DEFAULT_PORTS[parts.scheme]:
        return f"{parts.scheme}://{host}:{port}"
    return f"{parts.scheme}://{host}"


def origin_of_url(url: str) -> str | None:
    """The origin a full URL (such as a Referer) belongs to."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return normalize_origin(f"{parts.scheme}://{parts.netloc}") if parts.netloc else None
