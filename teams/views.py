"""The teams API: teams, members, invitations. Every view asks selectors.team_for for the
team and the caller's role, so someone outside a team gets 404 and a role too low 403."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.authentication import signed_in
from audit import selectors as audit_selectors
from audit.views import AuditParams, PageSchema
from audit.views import answer as audit_answer
from core.api.schema import error
from teams import selectors, services
from teams.models import Team
from teams.roles import Role
from teams.serializers import (
    AcceptInputSerializer,
    InvitationInputSerializer,
    InvitationSerializer,
    MemberSerializer,
    RoleInputSerializer,
    TeamInputSerializer,
    TeamSerializer,
    TeamUpdateSerializer,
)

FORBIDDEN = error("forbidden: the caller's role on the team is too low for this")
LAST_OWNER = error("last_owner: a team must keep at least one owner")


def _input(serializer_class, request: Request) -> dict:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _team(request: Request, team_id: str, needed: str = Role.VIEWER) -> Team:
    return selectors.team_for(signed_in(request), team_id, needed)


def _shown(request: Request, team_id) -> dict:
    return TeamSerializer(_team(request, team_id)).data


class TeamsView(APIView):
    @extend_schema(responses={200: TeamSerializer(many=True)}, summary="The caller's teams")
    def get(self, request: Request) -> Response:
        teams = selectors.teams_of(signed_in(request))
        return Response(TeamSerializer(teams, many=True).data)

    @extend_schema(request=TeamInputSerializer, responses={201: TeamSerializer},
                   summary="Make a team, with the caller as its owner")
    def post(self, request: Request) -> Response:
        team = services.team_create(owner=signed_in(request), **_input(TeamInputSerializer,
                                                                        request))
        return Response(_shown(request, team.pk), status=status.HTTP_201_CREATED)


class TeamView(APIView):
    @extend_schema(responses={200: TeamSerializer}, summary="One team")
    def get(self, request: Request, team_id: str) -> Response:
        return Response(_shown(request, team_id))

    @extend_schema(request=TeamUpdateSerializer, responses={200: TeamSerializer, 403: FORBIDDEN},
                   summary="Rename a team (admin), or hand its account of record to another "
                           "owner (owner)")
    def patch(self, request: Request, team_id: str) -> Response:
        data = _input(TeamUpdateSerializer, request)
        team = _team(request, team_id, Role.ADMIN)
        changes = {"name": data["name"]} if "name" in data else {}
        if "accountOfRecord" in data:
            changes["account_of_record"] = data["accountOfRecord"]
        services.team_update(team=team, actor=signed_in(request), **changes)
        return Response(_shown(request, team_id))

    @extend_schema(responses={204: None, 403: FORBIDDEN,
                              409: error("team_not_empty: the team still has forms")},
                   summary="Delete a team that has no forms (owner)")
    def delete(self, request: Request, team_id: str) -> Response:
        services.team_delete(team=_team(request, team_id, Role.OWNER),
                             actor=signed_in(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class MembersView(APIView):
    @extend_schema(responses={200: MemberSerializer(many=True)}, summary="A team's members")
    def get(self, request: Request, team_id: str) -> Response:
        members = selectors.members_of(_team(request, team_id))
        return Response(MemberSerializer(members, many=True).data)


class MemberView(APIView):
    @extend_schema(request=RoleInputSerializer,
                   responses={200: MemberSerializer, 403: FORBIDDEN, 409: LAST_OWNER},
                   summary="Change a member's role")
    def patch(self, request: Request, team_id: str, user_id: str) -> Response:
        role = _input(RoleInputSerializer, request).get("role")
        team = _team(request, team_id)
        if role is None:  # a PATCH that changes nothing
            return Response(MemberSerializer(services.member_of(team, user_id)).data)
        member = services.member_update(team=team, actor=signed_in(request), user_id=user_id,
                                        role=role)
        return Response(MemberSerializer(member).data)

    @extend_schema(responses={204: None, 403: FORBIDDEN, 409: LAST_OWNER},
                   summary="Remove a member, or leave the team (one's own user id)")
    def delete(self, request: Request, team_id: str, user_id: str) -> Response:
        team = _team(request, team_id)
        services.member_remove(team=team, actor=signed_in(request), user_id=user_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class InvitationsView(APIView):
    @extend_schema(responses={200: InvitationSerializer(many=True), 403: FORBIDDEN},
                   summary="A team's open invitations (admin)")
    def get(self, request: Request, team_id: str) -> Response:
        invitations = selectors.open_invitations_of(_team(request, team_id, Role.ADMIN))
        return Response(InvitationSerializer(invitations, many=True).data)

    @extend_schema(request=InvitationInputSerializer,
                   responses={201: InvitationSerializer, 403: FORBIDDEN},
                   summary="Invite an address by a one-time emailed link (admin; owners "
                           "invite owners)")
    def post(self, request: Request, team_id: str) -> Response:
        data = _input(InvitationInputSerializer, request)
        team = _team(request, team_id)
        invitation = services.invitation_create(
            team=team, actor=signed_in(request), email=data["email"], role=data["role"])
        return Response(InvitationSerializer(invitation).data, status=status.HTTP_201_CREATED)


class InvitationView(APIView):
    @extend_schema(responses={204: None, 403: FORBIDDEN}, summary="Withdraw an invitation")
    def delete(self, request: Request, team_id: str, invitation_id: str) -> Response:
        services.invitation_delete(team=_team(request, team_id, Role.ADMIN),
                                   invitation_id=invitation_id, actor=signed_in(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class AcceptView(APIView):
    @extend_schema(
        request=AcceptInputSerializer,
        responses={200: TeamSerializer,
                   403: error("forbidden: the invitation is for another address, or the "
                              "account's address is not verified")},
        summary="Accept an invitation: join its team with its role",
        description="400 invalid_invitation when the token is unknown, used, withdrawn or "
                    "expired.",
    )
    def post(self, request: Request) -> Response:
        token = _input(AcceptInputSerializer, request)["token"]
        team = services.invitation_accept(user=signed_in(request), token=token)
        return Response(_shown(request, team.pk))


class TeamAuditView(APIView):
    http_method_names = ["get", "head", "options"]

    @extend_schema(operation_id="teams_audit_list", parameters=[AuditParams],
                   responses={200: PageSchema, 403: FORBIDDEN},
                   summary="A team's audit log, newest first (admin)")
    def get(self, request: Request, team_id: str) -> Response:
        team = _team(request, team_id, Role.ADMIN)
        return audit_answer(request, audit_selectors.entries_of_team(team.pk), f"team:{team.pk}")
