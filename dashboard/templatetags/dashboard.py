"""How the dashboard shows a time, a field's value and an integration, on every page alike."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django import template
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.dateparse import parse_datetime
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from core.timefmt import iso
from dashboard import naming
from integrations.naming import destination as named_destination
from submissions.representation import field_text

register = template.Library()

# Past this many characters (or lines) a value is cut, and the rest is one click away.
SHORT_CHARS = 160
SHORT_LINES = 3


@register.filter
def when(value: datetime | str | None, style: str = "Y-m-d H:i") -> SafeString | str:
    """A ``<time>`` in the owner's zone (the one activated for the request), its zone named."""
    moment = parse_datetime(value) if isinstance(value, str) else value
    if moment is None:
        return ""
    local = timezone.localtime(moment)
    return format_html('<time datetime="{}">{} {}</time>', iso(moment),
                       date_format(local, style), local.tzname())


@register.filter
def value_text(value: Any) -> str:
    """A field's value as the export writes it (a list joined, a structure as JSON)."""
    return field_text(value)


@register.inclusion_tag("dashboard/_value.html")
def value(raw: Any, limit: int | None = SHORT_CHARS) -> dict[str, Any]:
    """A field's value as the export writes it; a long one shows its start, the whole of it
    behind <details> (no script needed). ``None``: the whole of it, always (the submission's
    own page, where the owner came to read it)."""
    text = field_text(raw)
    lines = text.splitlines()
    long = limit is not None and (len(text) > limit or len(lines) > SHORT_LINES)
    start = "\n".join(lines[:SHORT_LINES])[:limit].rstrip() if long else text
    return {"text": text, "start": start, "long": long, "length": len(text)}


# After these an address, a URL or a key may break; in the middle of a word only as a last resort.
BREAK_AFTER = re.compile(r"([/.@?&=:_-]+)")


@register.filter
def breakable(text: Any) -> SafeString:
    """``text`` escaped, with a break opportunity after each of its separators, so a long URL
    or address wraps at its dots and slashes, never mid-word where the line has room."""
    pieces = BREAK_AFTER.split(str(text if text is not None else ""))
    return mark_safe("".join(  # every piece is escaped
        escape(piece) + ("<wbr>" if index % 2 else "") for index, piece in enumerate(pieces)))


@register.filter
def destination(integration) -> str:
    return named_destination(integration)


@register.filter
def form_label(form) -> str:
    return naming.form_label(form)


@register.filter
def health_label(status: str | None) -> str:
    return naming.HEALTH_LABELS.get(status or "", "None")


@register.inclusion_tag("dashboard/_error.html")
def delivery_error(text: str | None) -> dict[str, Any]:
    return {"error": naming.shown_error(text)}


@register.inclusion_tag("dashboard/_time_zone.html", takes_context=True)
def time_zone_form(context) -> dict[str, Any]:
    """The Account page's time zone setting, showing the zone in use."""
    from dashboard.forms import TimeZoneForm

    user = context["request"].dashboard_user
    return {"zone_form": TimeZoneForm(initial={"timeZone": user.time_zone or "UTC"}),
            "chosen": bool(user.time_zone), "csrf_token": context.get("csrf_token")}


AUDIT_LIST_SHOWN = 5


@register.filter
def audit_value(value: Any) -> str:
    """An audit entry's detail in words: a list's first few items, yes or no, none."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        shown = ", ".join(str(item) for item in value[:AUDIT_LIST_SHOWN])
        more = len(value) - AUDIT_LIST_SHOWN
        return f"{shown} and {more} more" if more > 0 else shown
    return str(value)
