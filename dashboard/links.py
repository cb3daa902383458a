"""Redirects to the dashboard's named pages (dashboard/urls.py), with a query string."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpResponseRedirect
from django.urls import reverse


def with_query(name: str, *args: Any, fragment: str = "", **query: Any) -> HttpResponseRedirect:
    url = f"{reverse(name, args=args)}?{urlencode(query)}"
    return HttpResponseRedirect(f"{url}#{fragment}" if fragment else url)
