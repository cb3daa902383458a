from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import Http404

from accounts.models import User, normalize_email
from core import clock
from core.errors import forbidden
from teams.models import Invitation, Membership, Team
from teams.roles import allows
from teams.services import token_hash


def teams_of(user: User) -> QuerySet[Team]:
    """The user's teams, oldest first, each with the user's ``role``."""
    role = Membership.objects.filter(team=OuterRef("pk"), user=user).values("role")[:1]
    return (Team.objects.filter(memberships__user=user)
            .annotate(role=Subquery(role)).order_by("created_at", "pk"))


def team_for(user: User, team_id: Any, needed: str) -> Team:
    """The team, with the caller's ``role``: 404 to someone outside it, 403 to a member whose
    role is below ``needed``."""
    try:
        team = teams_of(user).filter(pk=team_id).first()
    except ValidationError:  # not an id at all
        team = None
    if team is None:
        raise Http404
    if not allows(caller_role(team), needed):
        raise forbidden(f"This needs the {needed} role on the team.")
    return team


def caller_role(team: Team) -> str:
    """The role teams_of() and team_for() annotate a team with."""
    return team.role  # type: ignore[attr-defined]


def members_of(team: Team) -> QuerySet[Membership]:
    return team.memberships.select_related("user").order_by("joined_at", "pk")


def open_invitations_of(team: Team) -> QuerySet[Invitation]:
    return team.invitations.filter(accepted_at__isnull=True).order_by("-created_at")


def has_open_invitation(email: str) -> bool:
    return Invitation.objects.filter(
        email=normalize_email(email), accepted_at__isnull=True, expires_at__gt=clock.now()
    ).exists()


def open_invitation(token: str) -> Invitation | None:
    """The invitation a mailed token names, while it may still be accepted: None when it was
    used, withdrawn, has expired or never existed."""
    return (Invitation.objects.select_related("team", "invited_by")
            .filter(token_hash=token_hash(token), accepted_at__isnull=True,
                    expires_at__gt=clock.now()).first())
