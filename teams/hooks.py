"""What other apps do when a member's role on a team changes or they leave it: a registry
teams calls and they fill at start (in their AppConfig.ready()), so teams imports none of
them. Inside the transaction that made the change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# (team id, user id, actor): the user's role on the team changed, or they are no longer in
# it; ``actor`` made that change (None: the service itself), so what ends with it is theirs.
ReachChanged = Callable[[Any, Any, Any], None]

on_reach_changed: list[ReachChanged] = []


def register_reach_changed(receiver: ReachChanged) -> None:
    if receiver not in on_reach_changed:
        on_reach_changed.append(receiver)


def reach_changed(team_id: Any, user_id: Any, actor: Any) -> None:
    for receiver in on_reach_changed:
        receiver(team_id, user_id, actor)
