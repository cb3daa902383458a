"""What a caller may do to a form: the one answer every API, export and key asks.

A personal form (no team) gives its owner the ``owner`` role and nobody else any; a team's
form gives each member of the team their team role. Every query of forms for a caller starts
from ``reachable``, so a form with no role is missing (404), never shown; ``form_for`` adds the
403 for a role too low."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Case, CharField, OuterRef, Q, QuerySet, Subquery, Value, When
from django.http import Http404

from accounts.models import User
from core.errors import ServiceError, forbidden
from forms_app.models import Form
from teams.models import Membership, Team
from teams.roles import Role, allows


def form_lookup(identifier: str) -> Q:
    """A form is named by its internal id or its endpoint slug."""
    try:
        return Q(pk=uuid.UUID(identifier))
    except ValueError:
        return Q(slug=identifier)


def reachable(user: User | Any, needed: str = Role.VIEWER) -> QuerySet[Form]:
    """Every form on which ``user`` has at least the ``needed`` role, each with the role as
    ``caller_role``. One's own forms give every role."""
    roles = [role for role in Role if allows(role, needed)]
    teams = Membership.objects.filter(user=user, role__in=roles).values("team")
    team_role = Membership.objects.filter(team=OuterRef("team"), user=user).values("role")[:1]
    return Form.objects.filter(Q(team__isnull=True, owner=user) | Q(team__in=teams)).annotate(
        caller_role=Case(When(team__isnull=True, then=Value(Role.OWNER.value)),
                         default=Subquery(team_role), output_field=CharField()))


def role_on(form: Form) -> str:
    """The role ``reachable`` annotated the form with."""
    return form.caller_role  # type: ignore[attr-defined]


def check(form: Form, needed: str) -> Form:
    if not allows(role_on(form), needed):
        raise forbidden(f"This needs the {needed} role on the form's team.")
    return form


def form_for(user: User | Any, identifier: str, needed: str = Role.VIEWER) -> Form:
    """The form named by id or slug: 404 without a role on it, 403 with one below ``needed``."""
    try:
        form = reachable(user).filter(form_lookup(identifier)).first()
    except ValidationError:
        form = None
    if form is None:
        raise Http404
    return check(form, needed)


def team_role(user: User | Any, team_id: Any) -> str | None:
    return Membership.objects.filter(user=user, team_id=team_id).values_list(
        "role", flat=True).first()


def role_of(user: User | Any, form: Form) -> str | None:
    """The role of one form already in hand, by the same rule as ``reachable``."""
    if form.team_id is None:
        return Role.OWNER if form.owner_id == user.pk else None
    return team_role(user, form.team_id)


def team_to_admin(user: Any, team_id: Any, form: Form | None = None) -> Team | None:
    """The team a form goes into, one the caller is admin of (a team they are not in is a 404,
    as another user's resource); or None: the creator's own forms, where only the creator
    may put it."""
    if team_id is None:
        if form is not None and form.owner_id != user.pk:
            raise forbidden("Only the form's creator may take it back from the team.")
        return None
    membership = Membership.objects.filter(user=user, team_id=team_id).select_related(
        "team").first()
    if membership is None:
        raise ServiceError("team_not_found", "No team of yours has this id.", 404)
    if not allows(membership.role, Role.ADMIN):
        raise forbidden("Putting forms in a team needs the admin role there.")
    return membership.team
