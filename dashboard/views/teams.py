"""The Teams page (one's teams, a new team) and each team's page: members and their roles,
invitations, leaving, and the team's settings (its name, its account of record, deleting
it). Every change goes through teams/services.py, as the API's do; selectors.team_for
answers 404 outside the team and the 403 page to a role too low."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from rest_framework import serializers

from accounts.authentication import signed_in
from core.errors import ServiceError
from dashboard.auth import login_required
from dashboard.forms import InviteForm, RoleForm, TeamForm
from dashboard.views.common import error_text, first_errors, validated
from teams import selectors, services
from teams.models import Team
from teams.roles import Role, allows
from teams.serializers import (
    InvitationInputSerializer,
    TeamInputSerializer,
    TeamUpdateSerializer,
)


def _team(request: HttpRequest, team_id: Any, needed: str = Role.VIEWER) -> Team:
    try:
        return selectors.team_for(signed_in(request), team_id, needed)
    except ServiceError as error:
        raise PermissionDenied(error.message) from None


@login_required
def teams_page(request: HttpRequest) -> HttpResponse:
    context = {"teams": selectors.teams_of(signed_in(request)), "team_form": TeamForm(),
               "section": "forms"}
    return render(request, "dashboard/teams.html", context)


@login_required
@require_POST
def team_create(request: HttpRequest) -> HttpResponse:
    posted = TeamForm(request.POST)
    try:
        if not posted.is_valid():
            raise serializers.ValidationError(first_errors(posted))
        values = validated(TeamInputSerializer, {"name": posted.cleaned_data["name"]})
        team = services.team_create(owner=signed_in(request), **values)
    except (ServiceError, serializers.ValidationError) as error:
        messages.error(request, error_text(error))
        return redirect("dashboard:teams")
    messages.success(request, f"Team “{team.name}” created. Invite its members below.")
    return redirect("dashboard:team", team.pk)


@login_required
def team_page(request: HttpRequest, team_id: str) -> HttpResponse:
    team = _team(request, team_id)
    role = selectors.caller_role(team)
    manages = allows(role, Role.ADMIN)
    everyone = list(selectors.members_of(team))
    members = [{"member": member, "changeable": _may_change(role, member.role)}
               for member in everyone]
    context = {
        "team": team, "role": role, "manages": manages, "members": members,
        "roles": [value for value in Role if role == Role.OWNER or value != Role.OWNER],
        "invitations": selectors.open_invitations_of(team) if manages else [],
        "invite_form": InviteForm(), "section": "forms", "me": signed_in(request),
        "rename_form": TeamForm(auto_id="team-%s", initial={"name": team.name}),
        "owners": [member for member in everyone if member.role == Role.OWNER],
    }
    return render(request, "dashboard/team.html", context)


def _may_change(actor_role: str, member_role: str) -> bool:
    """As teams.services says: admins manage the members below owner, owners everyone."""
    return allows(actor_role, Role.ADMIN) and (
        member_role != Role.OWNER or actor_role == Role.OWNER)


def _done(request: HttpRequest, team: Team, action, success: str) -> HttpResponse:
    try:
        action()
    except (ServiceError, serializers.ValidationError) as error:
        messages.error(request, error_text(error))
    else:
        messages.success(request, success)
    return redirect("dashboard:team", team.pk)


@login_required
@require_POST
def member_role(request: HttpRequest, team_id: str, user_id: str) -> HttpResponse:
    team = _team(request, team_id, Role.ADMIN)
    posted = RoleForm(request.POST)
    if not posted.is_valid():
        messages.error(request, "Choose a role.")
        return redirect("dashboard:team", team.pk)
    role = posted.cleaned_data["role"]
    member = services.member_of(team, user_id)
    return _done(request, team, lambda: services.member_update(
        team=team, actor=signed_in(request), user_id=user_id, role=role),
        f"{member.user.email} is now {role}.")


@login_required
@require_POST
def member_remove(request: HttpRequest, team_id: str, user_id: str) -> HttpResponse:
    """Removing another member (admin; owners for owners), or leaving (one's own id)."""
    me = signed_in(request)
    team = _team(request, team_id)
    member = services.member_of(team, user_id)
    try:
        services.member_remove(team=team, actor=me, user_id=user_id)
    except ServiceError as error:
        if error.status_code == 403:
            raise PermissionDenied(error.message) from None
        messages.error(request, error_text(error))
        return redirect("dashboard:team", team.pk)
    if member.user_id == me.pk:
        messages.success(request, f"You left the team “{team.name}”.")
        return redirect("dashboard:teams")
    messages.success(request, f"{member.user.email} was removed from the team.")
    return redirect("dashboard:team", team.pk)


@login_required
@require_POST
def invitation_create(request: HttpRequest, team_id: str) -> HttpResponse:
    team = _team(request, team_id, Role.ADMIN)
    posted = InviteForm(request.POST)

    def invite() -> None:
        if not posted.is_valid():
            raise serializers.ValidationError(first_errors(posted))
        values = validated(InvitationInputSerializer, posted.cleaned_data)
        services.invitation_create(team=team, actor=signed_in(request), **values)

    email = request.POST.get("email", "")
    return _done(request, team, invite, f"Invitation emailed to {email}; it works for 7 days.")


@login_required
@require_POST
def invitation_withdraw(request: HttpRequest, team_id: str, invitation_id: str) -> HttpResponse:
    team = _team(request, team_id, Role.ADMIN)
    services.invitation_delete(team=team, invitation_id=invitation_id, actor=signed_in(request))
    messages.success(request, "Invitation withdrawn; its link no longer works.")
    return redirect("dashboard:team", team.pk)


@login_required
@require_POST
def team_rename(request: HttpRequest, team_id: str) -> HttpResponse:
    team = _team(request, team_id, Role.ADMIN)
    posted = TeamForm(request.POST)

    def rename() -> None:
        if not posted.is_valid():
            raise serializers.ValidationError(first_errors(posted))
        values = validated(TeamUpdateSerializer, {"name": posted.cleaned_data["name"]})
        services.team_update(team=team, actor=signed_in(request), **values)

    return _done(request, team, rename, "The team was renamed.")


@login_required
@require_POST
def team_account(request: HttpRequest, team_id: str) -> HttpResponse:
    """Hand the account of record (whose monthly limit the team's forms count toward) to
    another owner: owners only."""
    team = _team(request, team_id, Role.OWNER)

    def hand_over() -> None:
        values = validated(TeamUpdateSerializer,
                           {"accountOfRecord": request.POST.get("accountOfRecord", "")})
        services.team_update(team=team, actor=signed_in(request),
                             account_of_record=values["accountOfRecord"])

    return _done(request, team, hand_over,
                 "The account of record changed: the team's submissions now count toward "
                 "the chosen owner's monthly limit.")


@login_required
@require_POST
def team_delete(request: HttpRequest, team_id: str) -> HttpResponse:
    team = _team(request, team_id, Role.OWNER)
    try:
        services.team_delete(team=team, actor=signed_in(request))
    except ServiceError as error:
        messages.error(request, _not_deleted(team, error))
        return redirect("dashboard:team", team.pk)
    messages.success(request, f"The team “{team.name}” was deleted.")
    return redirect("dashboard:teams")


def _not_deleted(team: Team, error: ServiceError) -> str:
    if error.code != "team_not_empty":
        return error_text(error)
    count = team.forms.count()
    return (f"The team still has {count} form{'s' if count != 1 else ''}. Move each one to "
            "another team or back to its creator (the form's Settings, “Move form”), or "
            "delete it; then delete the team.")
