"""A form's field rules (contract, "Field rules"): what a rule may say, and the check of a
list the owner sends. What a submission must hold to pass them is intake's
(submissions/intake/rules.py); the dashboard's snippet is built from the same rules.

A rule is ``{name, type, required, maxLength?, min?, max?, options?}``. Each key means
something for some types only (``options`` for a select, ``min``/``max`` for a number or a
date, ``maxLength`` for text-like types); a key sent where it means nothing is refused, so
an owner never believes a rule holds that does not."""

from __future__ import annotations

import datetime
import math
from typing import Any

TYPES = ("text", "email", "number", "url", "tel", "date", "checkbox", "select", "file")
MAX_RULES = 100
MAX_NAME_LENGTH = 256  # a submitted field name's own bound (contract, "Input limits")
MAX_OPTIONS = 200
MAX_OPTION_LENGTH = 500
MAX_LENGTH = 10 * 1024 * 1024  # no value can be longer than a body
KEYS = ("name", "type", "required", "maxLength", "min", "max", "options")
# The types each optional key means something for.
LENGTH_TYPES = ("text", "email", "url", "tel")
RANGE_TYPES = ("number", "date")

Problems = dict[str, str]  # "2.type" -> what is wrong; "" for the list as a whole


def rules_problems(rules: Any) -> Problems:
    """Every problem of a list of rules, keyed by the rule's position and key. Empty when the
    list is good."""
    if not isinstance(rules, list):
        return {"": "Must be null or a list of field rules."}
    if len(rules) > MAX_RULES:
        return {"": f"A form may have at most {MAX_RULES} field rules."}
    problems: Problems = {}
    seen: set[str] = set()
    for index, rule in enumerate(rules):
        for key, text in _rule_problems(rule).items():
            problems[f"{index}.{key}" if key else str(index)] = text
        name = rule.get("name") if isinstance(rule, dict) else None
        if isinstance(name, str) and f"{index}.name" not in problems:
            if name in seen:
                problems[f"{index}.name"] = "Another rule already has this name."
            seen.add(name)
    return problems


def normalized(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A good list as it is kept and shown: ``required`` always there, keys in one order."""
    return [{key: rule.get(key, False) for key in KEYS if key in rule or key == "required"}
            for rule in rules]


def _rule_problems(rule: Any) -> Problems:
    if not isinstance(rule, dict):
        return {"": "Each rule must be an object with a name and a type."}
    unknown = sorted(key for key in rule if key not in KEYS)
    if unknown:
        return {key: "Unknown field." for key in unknown}
    problems: Problems = {}
    name_problem = _name_problem(rule.get("name"))
    if name_problem:
        problems["name"] = name_problem
    kind = rule.get("type")
    if kind not in TYPES:
        problems["type"] = f"Must be one of: {', '.join(TYPES)}."
        return problems
    if "required" in rule and not isinstance(rule["required"], bool):
        problems["required"] = "Must be true or false."
    problems.update(_bounds_problems(kind, rule))
    problems.update(_options_problems(kind, rule))
    return problems


def _name_problem(name: Any) -> str | None:
    if name is None:
        return "This field is required."
    if not isinstance(name, str):
        return "Must be a string."
    if not name.strip():
        return "A field name cannot be blank."
    if len(name) > MAX_NAME_LENGTH:
        return f"A field name has at most {MAX_NAME_LENGTH} characters."
    return _text_problem(name)


def _text_problem(text: str) -> str | None:
    """What a submitted name or value could never be (contract, "Input limits")."""
    if "\x00" in text:
        return "Must not contain the character U+0000."
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "Must be valid Unicode text."
    return None


def _bounds_problems(kind: str, rule: dict[str, Any]) -> Problems:
    problems: Problems = {}
    if "maxLength" in rule:
        problems.update(_max_length_problem(kind, rule["maxLength"]))
    for key in ("min", "max"):
        if key in rule:
            text = _limit_problem(kind, rule[key])
            if text:
                problems[key] = text
    if not problems and "min" in rule and "max" in rule and _ordered(kind, rule) is False:
        problems["min"] = "min must not be greater than max."
    return problems


def _max_length_problem(kind: str, value: Any) -> Problems:
    if kind not in LENGTH_TYPES:
        return {"maxLength": f"maxLength applies only to {', '.join(LENGTH_TYPES)} fields."}
    if isinstance(value, bool) or not isinstance(value, int):
        return {"maxLength": "Must be an integer."}
    if not 1 <= value <= MAX_LENGTH:
        return {"maxLength": f"Must be from 1 to {MAX_LENGTH}."}
    return {}


def _limit_problem(kind: str, value: Any) -> str | None:
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "Must be a number."
        return None if math.isfinite(value) else "Must be a finite number."
    if kind == "date":
        return None if parse_date(value) else "Must be a date written YYYY-MM-DD."
    return "min and max apply only to number and date fields."


def _ordered(kind: str, rule: dict[str, Any]) -> bool:
    if kind == "date":
        return parse_date(rule["min"]) <= parse_date(rule["max"])  # type: ignore[operator]
    return rule["min"] <= rule["max"]


def _options_problems(kind: str, rule: dict[str, Any]) -> Problems:
    if kind != "select":
        return {"options": "options apply only to select fields."} if "options" in rule else {}
    options = rule.get("options")
    if options is None:
        return {"options": "A select field needs its list of options."}
    if not isinstance(options, list) or not 1 <= len(options) <= MAX_OPTIONS:
        return {"options": f"Must be a list of 1 to {MAX_OPTIONS} options."}
    for option in options:
        text = _option_problem(option)
        if text:
            return {"options": text}
    if len(set(options)) != len(options):
        return {"options": "Each option may appear once."}
    return {}


def _option_problem(option: Any) -> str | None:
    if not isinstance(option, str):
        return "Each option must be a string."
    if not option.strip():
        return "An option cannot be blank."
    if len(option) > MAX_OPTION_LENGTH:
        return f"An option has at most {MAX_OPTION_LENGTH} characters."
    return _text_problem(option)


def parse_date(value: Any) -> datetime.date | None:
    """An ISO calendar date, exactly ``YYYY-MM-DD``; None for anything else."""
    if (not isinstance(value, str) or len(value) != 10 or not value.isascii()
            or value[4] != "-" or value[7] != "-"):
        return None
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        return None
