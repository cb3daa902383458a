"""A submission checked against its form's field rules (contract, "Field rules"): every
problem, each with the drop-in code a client like Formspree's shows on the right field and a
sentence the visitor can read. The rules' own shape is forms_app/field_rules.py's.

Multi-valued fields are deliberate: repeated names (and JSON arrays) arrive as a list, which a
checkbox (a group of boxes), a select (``<select multiple>``) and a file field (``multiple``)
take, each value checked; any other type takes one value, since a list there is a form that
does not match its rules. A value is what was sent: a number or an address is checked, never
rewritten, so what is stored is what the visitor typed."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from core.errors import ServiceError
from forms_app.field_rules import parse_date
from forms_app.models import Form
from submissions.intake.payload import FilePart

MISSING = "REQUIRED_FIELD_MISSING"
EMPTY = "REQUIRED_FIELD_EMPTY"
UNEXPECTED = "UNEXPECTED_FIELD"
TYPE_EMAIL, TYPE_NUMERIC, TYPE_TEXT, UNSPECIFIED = (
    "TYPE_EMAIL", "TYPE_NUMERIC", "TYPE_TEXT", "UNSPECIFIED")
# The code of a value of the wrong kind, by the rule's type.
WRONG_KIND = {"text": TYPE_TEXT, "email": TYPE_EMAIL, "number": TYPE_NUMERIC}
MULTI_VALUED = ("checkbox", "select", "file")
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
# Digits with the separators people write (+44 (0)20 7946-0958); 3 to 20 digits in all.
PHONE = re.compile(r"\+?[0-9 ().-]+")
LISTED_OPTIONS = 10  # more than this, and the message names none of them
MESSAGE = "Some fields are missing or not filled in correctly."


@dataclass(frozen=True)
class Problem:
    field: str
    code: str
    message: str


class FieldsRefused(ServiceError):
    """``422 invalid_fields``: ``details`` by field, and ``errors``, the drop-in list."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("invalid_fields", MESSAGE, 422,
                         details={problem.field: problem.message for problem in problems})
        self.problems = problems

    @property
    def errors(self) -> list[dict[str, str]]:
        return [{"field": problem.field, "code": problem.code, "message": problem.message}
                for problem in self.problems]


def check(form: Form, fields: list[list]) -> None:
    """Raise FieldsRefused if ``fields`` (the fields that would be stored) break a rule of
    the form. A form without rules (null) takes anything, at the cost of one comparison."""
    if form.field_rules is None:
        return
    problems = problems_of(form.field_rules, form.allow_extra_fields, fields)
    if problems:
        raise FieldsRefused(problems)


def problems_of(rules: list[dict], allow_extra: bool, fields: list[list]) -> list[Problem]:
    sent = dict((name, value) for name, value in fields)
    problems = [problem for rule in rules
                if (problem := _rule_problem(rule, sent)) is not None]
    if not allow_extra:
        named = {rule["name"] for rule in rules}
        problems += [Problem(name, UNEXPECTED, f"This form does not take a field named “{name}”.")
                     for name in sent if name not in named]
    return problems


def _rule_problem(rule: dict, sent: dict[str, Any]) -> Problem | None:
    name = rule["name"]
    if name not in sent:
        if rule["required"]:
            return Problem(name, MISSING, f"“{name}” is required.")
        return None
    value = sent[name]
    if _blank(value, rule["type"]):
        return Problem(name, EMPTY, f"Please fill in “{name}”.") if rule["required"] else None
    found = _value_problem(rule, value)
    return None if found is None else Problem(name, found[0], found[1].format(name=name))


def _blank(value: Any, kind: str) -> bool:
    if value is None or (value is False and kind == "checkbox"):  # false: a box unticked
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list):
        return all(_blank(item, kind) for item in value)
    return False


def _value_problem(rule: dict, value: Any) -> tuple[str, str] | None:
    """(code, message with ``{name}``) of what is wrong with a value that is not blank."""
    kind = rule["type"]
    if isinstance(value, list) and kind not in MULTI_VALUED:
        return WRONG_KIND.get(kind, UNSPECIFIED), "“{name}” takes one value, not several."
    values = value if isinstance(value, list) else [value]
    if kind != "file" and any(isinstance(item, FilePart) for item in values):
        return WRONG_KIND.get(kind, UNSPECIFIED), "“{name}” must be filled in, not a file."
    return CHECKS[kind](rule, value)


def _text(rule: dict, value: Any) -> tuple[str, str] | None:
    if not isinstance(value, str):
        return TYPE_TEXT, "“{name}” must be text."
    return _length(rule, value)


def _length(rule: dict, value: str) -> tuple[str, str] | None:
    most = rule.get("maxLength")
    if most is not None and len(value) > most:
        return TYPE_TEXT, f"“{{name}}” must be at most {most} characters long."
    return None


def _email(rule: dict, value: Any) -> tuple[str, str] | None:
    wrong = TYPE_EMAIL, "“{name}” must be a valid email address."
    if not isinstance(value, str):
        return wrong
    try:
        validate_email(value.strip())
    except ValidationError:
        return wrong
    return _length(rule, value)


def _number(rule: dict, value: Any) -> tuple[str, str] | None:
    number = _as_number(value)
    if number is None:
        return TYPE_NUMERIC, "“{name}” must be a number."
    if "min" in rule and number < Decimal(str(rule["min"])):
        return TYPE_NUMERIC, f"“{{name}}” must be {_shown(rule['min'])} or more."
    if "max" in rule and number > Decimal(str(rule["max"])):
        return TYPE_NUMERIC, f"“{{name}}” must be {_shown(rule['max'])} or less."
    return None


def _as_number(value: Any) -> Decimal | None:
    """A JSON number, or text that is one written plainly (``-3``, ``2.5``, ``1e3``); exact,
    so a bound is never passed by rounding."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Decimal(str(value)) if math.isfinite(value) else None
    if isinstance(value, str) and len(value) <= 100 and NUMBER.fullmatch(value.strip()):
        try:
            return Decimal(value.strip())
        except InvalidOperation:
            return None
    return None


def _shown(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else str(bound)


def _url(rule: dict, value: Any) -> tuple[str, str] | None:
    wrong = UNSPECIFIED, "“{name}” must be a web address starting with http:// or https://."
    if not isinstance(value, str):
        return wrong
    text = value.strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        return wrong
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or any(
            char.isspace() for char in text):
        return wrong
    return _length(rule, value)


def _tel(rule: dict, value: Any) -> tuple[str, str] | None:
    if not isinstance(value, str) or not PHONE.fullmatch(value.strip()) or not (
            3 <= sum(char.isdigit() for char in value) <= 20):
        return UNSPECIFIED, "“{name}” must be a phone number."
    return _length(rule, value)


def _date(rule: dict, value: Any) -> tuple[str, str] | None:
    day = parse_date(value.strip() if isinstance(value, str) else value)
    if day is None:
        return UNSPECIFIED, "“{name}” must be a date written YYYY-MM-DD."
    if "min" in rule and day < parse_date(rule["min"]):  # type: ignore[operator]
        return UNSPECIFIED, f"“{{name}}” must be on or after {rule['min']}."
    if "max" in rule and day > parse_date(rule["max"]):  # type: ignore[operator]
        return UNSPECIFIED, f"“{{name}}” must be on or before {rule['max']}."
    return None


def _checkbox(rule: dict, value: Any) -> tuple[str, str] | None:
    # A ticked box sends its value (often "on"), a JSON client true; a group sends several.
    values = value if isinstance(value, list) else [value]
    if all(item is True or isinstance(item, str) for item in values):
        return None
    return UNSPECIFIED, "“{name}” must be ticked or left unticked."


def _select(rule: dict, value: Any) -> tuple[str, str] | None:
    values = value if isinstance(value, list) else [value]
    if all(isinstance(item, str) and item in rule["options"] for item in values):
        return None
    options = rule["options"]
    if len(options) <= LISTED_OPTIONS:
        listed = ", ".join(option.replace("{", "{{").replace("}", "}}") for option in options)
        return UNSPECIFIED, f"“{{name}}” must be one of: {listed}."
    return UNSPECIFIED, "“{name}” must be one of the choices offered."


def _file(rule: dict, value: Any) -> tuple[str, str] | None:
    values = value if isinstance(value, list) else [value]
    if all(isinstance(item, FilePart) for item in values):
        return None
    return UNSPECIFIED, "“{name}” must be a file."


CHECKS = {"text": _text, "email": _email, "number": _number, "url": _url, "tel": _tel,
          "date": _date, "checkbox": _checkbox, "select": _select, "file": _file}
