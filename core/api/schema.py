"""The OpenAPI schema, told truthfully: every status an operation can answer, with the
contract's error shape, each defined once and referenced.

``FormFlowSchema`` adds to each operation the answers that follow from how its view is built
(who may call it, whether it takes a body, query or path parameters, whether it is rate
limited); an operation's own ``extend_schema`` adds what is particular to it (a ``409``, a
Google ``503``). ``components`` registers the shared schema, responses and headers.
"""

from __future__ import annotations

import copy
from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.permissions import AllowAny

ERROR = {
    "type": "object",
    "properties": {
        "error": {"type": "string", "description": "snake_case code", "example": "not_found"},
        "message": {"type": "string", "description": "one human sentence"},
        "details": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "what was wrong with each field or parameter, by name",
        },
    },
    "required": ["error", "message"],
}

class ErrorSchema(serializers.Serializer):
    """Documents the error shape (the ``Error`` component) for answers declared by a view."""

    error = serializers.CharField()
    message = serializers.CharField()
    details = serializers.DictField(child=serializers.CharField(), required=False)

    class Meta:
        ref_name = "Error"


def error(description: str) -> OpenApiResponse:
    """An answer particular to one operation, in the contract's error shape."""
    return OpenApiResponse(ErrorSchema, description=description)


# A form's team gives the caller a role too low for the operation (forms_app/access.py).
ROLE_TOO_LOW = "forbidden: the caller's role on the form's team is too low for this"


RATE_HEADERS = {
    "X-RateLimit-Limit": {"schema": {"type": "integer"}, "description": "requests a minute"},
    "X-RateLimit-Remaining": {"schema": {"type": "integer"}, "description": "left this minute"},
    "X-RateLimit-Reset": {
        "schema": {"type": "integer"},
        "description": "the minute's end, in Unix seconds",
    },
}
RETRY_AFTER = {
    "schema": {"type": "integer", "minimum": 1},
    "description": "seconds to wait",
}

# name: (status, description, extra headers)
RESPONSES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "BadRequest": ("400", "The input is not valid; `details` names each field.", {}),
    "Unauthenticated": ("401", "No valid session token or API key.", {}),
    "CsrfFailed": (
        "403", "A cookie-authenticated change without the CSRF header (csrf_failed).", {}),
    "NotFound": ("404", "No such resource, or it is not yours.", {}),
    "PayloadTooLarge": ("413", "The body is larger than the server takes.", {}),
    "UnsupportedMediaType": ("415", "The body's content type is not one this operation reads.", {}),
    "RateLimited": ("429", "Too many requests from this client or key.",
                    {"Retry-After": {"$ref": "#/components/headers/RetryAfter"}}),
    "UriTooLong": ("414", "The URL is longer than the server reads (uri_too_long).", {}),
    "HeadersTooLarge": ("431", "The headers are larger than the server reads.", {}),
    "Unavailable": ("503", "The database or the task queue is briefly away (with "
                    "Retry-After), or a service this operation needs is not set up.",
                    {"Retry-After": {"$ref": "#/components/headers/RetryAfter"}}),
}

# DRF's text fields refuse a NUL character; a string the schema leaves open says so.
NO_NUL = "^[^\\u0000]*$"
# What Python's str.strip() removes, spelled out: ECMA-262's \\s differs from it (it lacks
# U+001C-U+001F and U+0085, and has U+FEFF), and clients read the pattern as ECMA-262.
SPACE = "\\t-\\r\\u001c- \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
# A field that trims its text and refuses blank text takes it only with something else in it.
NOT_BLANK = f"^[^\\u0000]*[^{SPACE}\\u0000][^\\u0000]*$"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/responses/{name}"}


def components(result: dict, generator, request, public) -> dict:
    """Postprocessing hook: the shared error schema, responses and headers."""
    parts = result.setdefault("components", {})
    parts.setdefault("schemas", {})["Error"] = ERROR
    headers = parts.setdefault("headers", {})
    headers["RetryAfter"] = RETRY_AFTER
    for name, header in RATE_HEADERS.items():
        headers[name.replace("-", "")] = header
    closed = _closed_components()
    for name, schema in parts.get("schemas", {}).items():
        if name.endswith("Request"):
            strict_input(schema, closed=name in closed)
    for operation in _operations(result):
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "query":
                _no_nul(parameter.get("schema", {}))
    parts["responses"] = {name: _response(name, JSON_ERROR) for name in RESPONSES}
    return result


JSON_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
JSON_OR_HTML_ERROR = {**JSON_ERROR, "text/html": {"schema": {"type": "string"}}}


def _response(name: str, content: dict) -> dict:
    _, description, headers = RESPONSES[name]
    # A copy each time: a YAML rendering would turn shared objects into anchors.
    return {"description": description, "content": copy.deepcopy(content),
            **({"headers": headers} if headers else {})}


def _with_html_errors(answers: dict) -> None:
    """An endpoint that answers a browser with a page: each error as JSON or as HTML."""
    for status, answer in list(answers.items()):
        if not status.startswith(("4", "5")):
            continue
        if "$ref" in answer:
            answers[status] = _response(answer["$ref"].rsplit("/", 1)[1], JSON_OR_HTML_ERROR)
        else:
            answer["content"] = copy.deepcopy(JSON_OR_HTML_ERROR)


def _operations(result: dict):
    for methods in result.get("paths", {}).values():
        yield from (operation for method, operation in methods.items() if method != "parameters")


def _closed_components() -> set[str]:
    """The request components of serializers that refuse keys they do not know
    (StrictSerializer); the others ignore them, and their schema leaves them open."""
    from core.api.strict import StrictSerializer

    names, pending = set(), [StrictSerializer]
    while pending:
        cls = pending.pop()
        pending += cls.__subclasses__()
        base = cls.__name__.removesuffix("Serializer")
        names |= {f"{base}Request", f"Patched{base}Request"}
    return names


def strict_input(schema: dict, closed: bool = True) -> None:
    """NULs refused in a request's text, as DRF does; with ``closed``, fields the body does
    not define refused too (at its top level, and in any object within)."""
    if schema.get("type") == "object" and "properties" in schema:
        if closed:
            schema.setdefault("additionalProperties", False)
        for field in schema["properties"].values():
            strict_input(field, closed)
    elif schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        strict_input(schema["items"], closed)
    else:
        _no_nul(schema)


def _trims_and_refuses_blank(field: serializers.Field, schema: dict) -> bool:
    """Text DRF trims before it checks for blank: "  " is as refused as ""."""
    return (isinstance(field, serializers.CharField) and field.trim_whitespace
            and not field.allow_blank and schema.get("type") == "string"
            and not {"enum", "format", "pattern"} & set(schema))


def _no_nul(schema: dict) -> None:
    if schema.get("type") == "string" and not {"enum", "format", "pattern"} & set(schema):
        schema["pattern"] = NO_NUL


TAGS = (
    ("/api/auth/google", "integrations"),
    ("/api/auth/", "auth"),
    ("/api/v1/f/", "public"),
    ("/f/", "public"),
    ("/api/v1/forms", "forms"),
    ("/api/v1/integrations", "integrations"),
    ("/api/v1/deliveries", "integrations"),
    ("/api/v1/hooks", "hooks"),
    ("/api/v1/erasures", "erasures"),
    ("/api/v1/api-keys", "api-keys"),
    ("/api/v1/submissions", "pull"),
    ("/api/v1/teams", "teams"),
    ("/api/v1/invitations", "teams"),
    ("/api/v1/audit", "audit"),
)


class FormFlowSchema(AutoSchema):
    def get_tags(self) -> list[str]:
        for prefix, tag in TAGS:
            if self.path.startswith(prefix):
                return [tag]
        return super().get_tags()

    def get_operation_id(self) -> str:
        # The version is in every path: a generated client reads better without it.
        return super().get_operation_id().removeprefix("v1_")

    def _map_serializer_field(self, field, direction, bypass_extensions=False) -> dict:
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if direction == "request" and field.validators and schema.get("type") == "string":
            # drf-spectacular states validators only for a serializer's own fields; a list's
            # items (fileUploads.types) would lose their pattern. Stated first, a pattern wins
            # over the not-blank one below.
            self._insert_field_validators(field, schema)
        if direction == "request" and _trims_and_refuses_blank(field, schema):
            schema["pattern"] = NOT_BLANK
        return schema

    def get_operation(self, *args, **kwargs) -> dict | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is not None:
            self._add_common_answers(operation)
        return operation

    def _add_common_answers(self, operation: dict) -> None:
        answers = operation.setdefault("responses", {})
        parameters = operation.get("parameters", [])
        wanted: list[str] = []
        if "requestBody" in operation:
            wanted += ["BadRequest", "PayloadTooLarge", "UnsupportedMediaType"]
        elif any(parameter["in"] == "query" for parameter in parameters):
            wanted.append("BadRequest")
        if self._checks_credentials():
            wanted.append("Unauthenticated")
            if self.method not in ("GET", "HEAD", "OPTIONS") and self._takes_session():
                wanted.append("CsrfFailed")
        if any(parameter["in"] == "path" for parameter in parameters):
            wanted.append("NotFound")
        if self._rate_limited():
            wanted.append("RateLimited")
        wanted += ["UriTooLong", "HeadersTooLarge", "Unavailable"]
        for name in wanted:
            answers.setdefault(RESPONSES[name][0], _ref(name))
        if getattr(self.view, "answers_html", False):
            _with_html_errors(answers)
        if "requestBody" in operation and self.method != "PATCH":
            # A POST without a body is refused (its serializer has required fields, or the
            # public endpoint has no fields); a PATCH without one changes nothing and is fine.
            operation["requestBody"]["required"] = True
        if getattr(self.view, "rate_headers", False):
            self._add_rate_headers(answers)

    def _checks_credentials(self) -> bool:
        """A 401 comes from a view that needs a caller, or from one that reads credentials
        when sent (a bad or revoked token is refused even where none is needed)."""
        permissions = self.view.get_permissions()
        needs = not all(isinstance(permission, AllowAny) for permission in permissions)
        return needs or bool(self.view.get_authenticators())

    def _takes_session(self) -> bool:
        """An authenticator that reads the session cookie says so (``reads_session``)."""
        return any(getattr(auth, "reads_session", False)
                   for auth in self.view.get_authenticators())

    def _rate_limited(self) -> bool:
        return bool(getattr(self.view, "throttle_group", "")) or getattr(
            self.view, "rate_headers", False) or getattr(self.view, "limits_guesses", False)

    def _add_rate_headers(self, answers: dict) -> None:
        """The pull API sends its key's usage on every answer past authentication."""
        for status, answer in answers.items():
            if status == "401" or "$ref" in answer:
                continue
            headers = answer.setdefault("headers", {})
            for name in RATE_HEADERS:
                headers[name] = {"$ref": f"#/components/headers/{name.replace('-', '')}"}
