"""The audit log page: the account's entries, newest first, with the API's filters and paging."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from accounts.authentication import signed_in
from audit import selectors
from core.cursors import CursorError
from dashboard.auth import login_required
from dashboard.forms import AuditFilterForm

PAGE_SIZE = 50


def _since(day) -> datetime | None:
    """The chosen day's first moment in the owner's zone."""
    if day is None:
        return None
    return datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())


def _older(request: HttpRequest, cursor: str | None) -> str | None:
    if cursor is None:
        return None
    query = {key: value for key, value in request.GET.items() if key != "cursor" and value}
    return "?" + urlencode({**query, "cursor": cursor})


@login_required
def audit_page(request: HttpRequest) -> HttpResponse:
    owner = signed_in(request)
    filters = AuditFilterForm(request.GET or None)
    context: dict[str, Any] = {"filters": filters, "section": "account", "entries": []}
    if filters.is_bound and not filters.is_valid():
        return render(request, "dashboard/audit.html", context, status=400)
    chosen = filters.cleaned_data if filters.is_bound else {}
    try:
        found = selectors.page(
            selectors.entries_of(owner), log=f"owner:{owner.pk}", limit=PAGE_SIZE,
            cursor=chosen.get("cursor") or None, action=chosen.get("action") or None,
            since=_since(chosen.get("since")))
    except CursorError:
        context["cursor_error"] = "That page of the log is out of date: start again from the top."
        return render(request, "dashboard/audit.html", context, status=400)
    context.update(entries=found.entries, older=_older(request, found.next_cursor),
                   paged=bool(chosen.get("cursor")))
    return render(request, "dashboard/audit.html", context)
