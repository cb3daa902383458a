"""What other apps do for accounts: a registry accounts calls and they fill at start (in their
AppConfig.ready()), so accounts imports none of them.

The monthly quota's record is accounts' (quota.py); the counter that admits submissions
against it is intake's (submissions/intake/admission/), which registers how an operator's
reset reaches it (submissions/apps.py). Teams tells registration which addresses a team
invited (teams/apps.py), so they may sign up when REGISTRATION is invite, and settles an
account's teams before the account is deleted."""

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


# An address: whether an invitation of another app (a team's) lets it sign up.
InvitationCheck = Callable[[str], bool]

invitation_checks: list[InvitationCheck] = []


def register_invitation_check(check: InvitationCheck) -> None:
    if check not in invitation_checks:
        invitation_checks.append(check)


def invited_elsewhere(email: str) -> bool:
    return any(check(email) for check in invitation_checks)


# (user, who deletes it): what another app settles before the account goes, in the deletion's
# transaction (a team keeps an owner); a ServiceError refuses the deletion.
AccountLeaving = Callable[[Any, Any], None]

account_leavings: list[AccountLeaving] = []


def register_account_leaving(leaving: AccountLeaving) -> None:
    if leaving not in account_leavings:
        account_leavings.append(leaving)


def account_leaving(user: Any, actor: Any) -> None:
    for leaving in account_leavings:
        leaving(user, actor)
