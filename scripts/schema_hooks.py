"""Schemathesis hooks for scripts/schema_check.py: what the schema states but JSON Schema
cannot check, so a case the generator thinks valid is one the server must take.

A form's field rules (contract, "Field rules") must have names that differ from one another,
and a rule's ``min`` must not be above its ``max``; the schema says so in words, and a request
that breaks either is refused with 400 (tests/forms cover both). Cases that break them are
left out here rather than turning the positive-data check off for forms as a whole."""

from __future__ import annotations

import datetime
from typing import Any

import schemathesis


@schemathesis.hook
def filter_case(context, case) -> bool:
    body = case.body
    rules = body.get("fields") if isinstance(body, dict) else None
    return not isinstance(rules, list) or rules_checkable(rules)


def rules_checkable(rules: list) -> bool:
    """Whether a list of rules keeps the two rules JSON Schema cannot say."""
    names = [repr(rule.get("name")) for rule in rules if isinstance(rule, dict)]
    if len(names) != len(set(names)):
        return False
    return all(_in_order(rule) for rule in rules if isinstance(rule, dict))


def _in_order(rule: dict[str, Any]) -> bool:
    low, high = rule.get("min"), rule.get("max")
    if low is None or high is None:
        return True
    try:
        if rule.get("type") == "date":
            return datetime.date.fromisoformat(low) <= datetime.date.fromisoformat(high)
        return low <= high
    except (TypeError, ValueError):
        return True  # not a well-formed limit: the schema already refuses it
