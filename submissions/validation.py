"""What a stored submission may hold (contract, "Input limits").

Names and values are Unicode text without U+0000 and without lone surrogates, JSON numbers are
finite, JSON nesting is at most 32 levels, and a name is 1 to 256 characters. One lone
surrogate, stored, made every later read of the form fail (its JSON cannot be encoded as
UTF-8), so nothing that breaks a read is ever stored.
"""

from __future__ import annotations

import math
from typing import Any

from core.errors import ServiceError

MAX_DEPTH = 32
MAX_NAME_LENGTH = 256


def invalid(details: dict[str, str]) -> ServiceError:
    return ServiceError(
        "invalid_submission", "The submission holds something that cannot be stored.", 400,
        details=details,
    )


def text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains the character U+0000"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode text (a lone surrogate)"
    return None


def check(pairs: list[list[Any]]) -> None:
    """Raise invalid_submission naming the first field that cannot be stored."""
    for name, value in pairs:
        label = name if isinstance(name, str) and not text_problem(name) else "(field name)"
        problem = _name_problem(name) or _value_problem(value)
        if problem:
            raise invalid({label[:MAX_NAME_LENGTH]: problem})


def _name_problem(name: Any) -> str | None:
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME_LENGTH:
        return f"a field name must be 1 to {MAX_NAME_LENGTH} characters"
    problem = text_problem(name)
    return f"the field name {problem}" if problem else None


def _value_problem(value: Any) -> str | None:
    """Walk a value without recursion (it may be nested deeply on purpose)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"is nested more than {MAX_DEPTH} levels deep"
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                return problem
        elif isinstance(item, float) and not math.isfinite(item):
            return "is not a finite number"
        elif isinstance(item, dict):
            for key, inner in item.items():
                problem = text_problem(key)
                if problem:
                    return f"holds a key that {problem}"
                stack.append((inner, depth + 1))
        elif isinstance(item, list):
            stack.extend((inner, depth + 1) for inner in item)
    return None
