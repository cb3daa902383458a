"""What other apps do for accounts: a registry accounts calls and they fill at start (in their
AppConfig.ready()), so accounts imports none of them.

The monthly quota's record is accounts' (quota.py); the counter that admits submissions
against it is intake's (submissions/intake/admission/), which registers how an operator's
reset reaches it (submissions/apps.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

# (user id, month): the month's record back to zero, and every counter kept beside it.
UsageReset = Callable[[Any, date], None]

usage_resets: list[UsageReset] = []


def register_usage_reset(reset: UsageReset) -> None:
    if reset not in usage_resets:
        usage_resets.append(reset)


def usage_reset(user_id: Any, month: date) -> None:
    for reset in usage_resets:
        reset(user_id, month)
