"""What every kind of integration says about itself, in one place (integrations/kinds/)."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from django import forms
from django.template import Engine, Template

from core.text import mask
from integrations.clients import http


class ConfigForm(forms.Form):
    """A kind's dashboard card. It bounds and trims what the page sends; the integration
    service then checks the config as it checks the API's, so both say the same."""

    def config(self) -> dict[str, Any]:
        return dict(self.cleaned_data)


def optional_text(max_length: int) -> forms.CharField:
    """An optional text field of a card: whether it may be empty is the service's to say."""
    return forms.CharField(required=False, max_length=max_length)


@dataclass(frozen=True)
class Outcome:
    """What one attempt at one delivery came to, in one shape for every kind."""

    ok: bool
    status_code: int | None = None
    error: str | None = None
    retry_after: float | None = None
    permanent: bool = False  # no retry will help
    held: bool = False  # not sent yet on purpose (the owner's hourly digest), nothing wrong
    disable: bool = False  # the receiver said the destination is gone (404/410)
    secrets: dict[str, Any] | None = None  # refreshed credentials to store


def no_errors(_config: dict[str, Any]) -> dict[str, str]:
    return {}


def no_secrets() -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Kind:
    """One kind of integration.

    - ``keys``: the config a client may send (what it must send, ``errors`` checks);
      ``secret_keys`` among them are kept encrypted and shown masked to their last 4
      characters, except in the answer that created them.
    - ``generated``: secrets made at creation (a webhook's signing secret), shown in that one
      answer only, never masked.
    - ``errors``: the config's problems, by ``config.<key>``; the keys themselves are checked
      before it runs.
    - ``transport``: hands one event to the integration.
    - ``schema_in`` and ``schema_out``: its config in the OpenAPI schema; no ``schema_in``
      means it is not created through the API (Google Sheets connects through Google).
    - ``form``: the dashboard's card as a Django form (a ConfigForm) whose ``config()`` is
      what the API would be sent; ``folder`` holds ``card.html``, the card that adds one.
    - ``defaults``: config values a client may leave out (a webhook's ``events``).
    """

    type: str
    label: str
    transport: Callable[..., Outcome]
    schema_out: dict[str, Any]
    folder: Path
    keys: frozenset[str] = frozenset()
    secret_keys: frozenset[str] = frozenset()
    errors: Callable[[dict[str, Any]], dict[str, str]] = no_errors
    generated: Callable[[], dict[str, Any]] = no_secrets
    generated_keys: frozenset[str] = frozenset()
    schema_in: dict[str, Any] | None = None
    form: builtins.type[ConfigForm] | None = None  # "type" is the field above
    defaults: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def api_created(self) -> bool:
        return self.schema_in is not None

    def public_config(self, config: dict[str, Any], secrets: dict[str, Any],
                      reveal: bool) -> dict[str, Any]:
        shown = dict(config)
        for key, value in secrets.items():
            if key in self.secret_keys:
                shown[key] = value if reveal else mask(str(value))
            elif reveal:
                shown[key] = value  # generated: in the creating answer only
        return shown

    @cached_property
    def card(self) -> Template | None:
        path = self.folder / "card.html"
        return Engine.get_default().from_string(path.read_text()) if path.exists() else None


def http_outcome(result: http.HttpResult, disable_on: tuple[int, ...] = (410,)) -> Outcome:
    """A receiver's answer as an outcome: 2xx succeeds, 429 and 5xx are tried again (after
    Retry-After), and ``disable_on`` statuses turn the integration off for good."""
    if result.status_code in disable_on:
        return Outcome(False, result.status_code,
                       f"HTTP {result.status_code}: integration disabled", permanent=True,
                       disable=True)
    return Outcome(result.ok, result.status_code, result.error, result.retry_after)
