"""Teams, their members and invitations. Who may do what is roles.py's; every change that
could leave a team without an owner holds the team's row first, so two at once cannot."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import ProtectedError
from django.http import Http404

from accounts.models import User, normalize_email
from audit.services import Target, record
from core import clock, crypto
from core.errors import ServiceError, forbidden, invalid
from teams import hooks, mails
from teams.models import Invitation, Membership, Team
from teams.roles import Role, allows

INVITATION_LIFETIME = timedelta(days=7)
UNSET: Any = object()


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _audit(team: Team, actor: User | None, action: str, target: Target,
           details: dict[str, Any] | None = None) -> None:
    """An entry in the team's log (GET /api/v1/teams/{id}/audit)."""
    record(owner_id=team.account_of_record_id, actor=actor, action=action, team_id=team.pk,
           target=target, details=details)


def _member(member: Membership) -> Target:
    return Target("member", member.user_id, member.user.email)


@transaction.atomic
def team_create(*, owner: User, name: str) -> Team:
    team = Team.objects.create(name=name, account_of_record=owner)
    Membership.objects.create(team=team, user=owner, role=Role.OWNER)
    _audit(team, owner, "team.created", Target("team", team.pk, team.name))
    return team


def _locked(team: Team) -> None:
    """Hold the team's row; its account of record is read under the hold, as a change that
    held it before may have handed it on. A team deleted meanwhile: 404."""
    held = list(Team.objects.select_for_update().filter(pk=team.pk)
                .values_list("account_of_record_id", flat=True))
    if not held:
        raise Http404
    team.account_of_record_id = held[0]


def _held(team: Team, actor: User, needed: str = Role.VIEWER) -> str:
    """Hold the team's row, then read the actor's role: a role that a change holding the row
    first took away (an owner demoting or removing another) cannot act once more. No role
    left: 404, as for anyone outside the team; one below ``needed``: 403."""
    _locked(team)
    role = team.memberships.filter(user=actor).values_list("role", flat=True).first()
    if role is None:
        raise Http404
    if not allows(role, needed):
        raise forbidden(f"This needs the {needed} role on the team.")
    return role


@transaction.atomic
def team_update(*, team: Team, actor: User, name: str = UNSET,
                account_of_record: Any = UNSET) -> Team:
    """A name needs an admin, the account of record an owner."""
    role = _held(team, actor, Role.ADMIN)
    if name is not UNSET:
        team.name = name
    if account_of_record is not UNSET:
        if not allows(role, Role.OWNER):
            raise forbidden("Only an owner may hand the account of record to another owner.")
        if not team.memberships.filter(user_id=account_of_record, role=Role.OWNER).exists():
            raise invalid({"accountOfRecord": "Choose an owner of this team."})
        team.account_of_record_id = account_of_record
        team.forms.update(account_id=account_of_record)  # their limits (Form.account)
    team.save()
    changed = [key for key, value in (("name", name), ("accountOfRecord", account_of_record))
               if value is not UNSET]
    if changed:
        _audit(team, actor, "team.changed", Target("team", team.pk, team.name),
               {"changed": changed})
    return team


@transaction.atomic
def team_delete(*, team: Team, actor: User) -> None:
    _held(team, actor, Role.OWNER)
    # Recorded first: if the team cannot go (it has forms), the entry goes with the refusal.
    _audit(team, actor, "team.deleted", Target("team", team.pk, team.name))
    try:
        with transaction.atomic():
            team.delete()
    except ProtectedError:
        raise ServiceError("team_not_empty", "Move or delete the team's forms first.",
                           status_code=409) from None


def member_of(team: Team, user_id: Any) -> Membership:
    try:
        return team.memberships.select_related("user").get(user_id=user_id)
    except (Membership.DoesNotExist, ValidationError):
        raise Http404 from None


def _may_manage(actor_role: str, target_role: str) -> None:
    """Admins manage the members below owner; owners manage everyone."""
    if not allows(actor_role, Role.ADMIN):
        raise forbidden("Managing members needs the admin role.")
    if target_role == Role.OWNER and actor_role != Role.OWNER:
        raise forbidden("Only an owner may manage owners.")


def _keep_an_owner(team: Team, leaving: Membership) -> None:
    """The last owner can neither leave nor be demoted; the account of record passes to the
    longest-standing owner left."""
    if leaving.role != Role.OWNER:
        return
    others = team.memberships.filter(role=Role.OWNER).exclude(pk=leaving.pk).order_by(
        "joined_at", "pk")
    heir = others.first()
    if heir is None:
        raise ServiceError("last_owner", "A team must keep at least one owner.", status_code=409)
    if team.account_of_record_id == leaving.user_id:
        Team.objects.filter(pk=team.pk).update(account_of_record=heir.user_id)
        team.forms.update(account_id=heir.user_id)
        team.account_of_record_id = heir.user_id  # the log's entries of this change are theirs


def _withdraw_beyond(team: Team, user_id: Any, role: str | None) -> None:
    """A member's open invitations end with the power that sent them: all of them when the
    member leaves or drops below admin, those of owners when they stop being one."""
    sent = team.invitations.filter(invited_by_id=user_id, accepted_at__isnull=True)
    if role is None or not allows(role, Role.ADMIN):
        sent.delete()
    elif role != Role.OWNER:
        sent.filter(role=Role.OWNER).delete()


@transaction.atomic
def member_update(*, team: Team, actor: User, user_id: Any, role: str) -> Membership:
    actor_role = _held(team, actor)
    member = member_of(team, user_id)
    _may_manage(actor_role, member.role)
    _may_manage(actor_role, role)
    if role != Role.OWNER:
        _keep_an_owner(team, member)
    before = member.role
    member.role = role
    member.save(update_fields=["role"])
    _withdraw_beyond(team, member.user_id, role)
    hooks.reach_changed(team.pk, member.user_id, actor)
    if before != role:
        _audit(team, actor, "member.role_changed", _member(member), {"from": before, "to": role})
    return member


@transaction.atomic
def member_remove(*, team: Team, actor: User, user_id: Any) -> None:
    actor_role = _held(team, actor)
    member = member_of(team, user_id)
    if member.user_id != actor.pk:
        _may_manage(actor_role, member.role)
    _keep_an_owner(team, member)
    action = "member.left" if member.user_id == actor.pk else "member.removed"
    _leave(team, member, actor, action)


def _leave(team: Team, member: Membership, actor: User | None, action: str,
           details: dict[str, Any] | None = None) -> None:
    """The member goes, with what their role held (invitations, notifications, subscriptions);
    the team's row is held and an owner kept by the caller."""
    member.delete()
    _withdraw_beyond(team, member.user_id, None)
    hooks.reach_changed(team.pk, member.user_id, actor)
    _audit(team, actor, action, _member(member), {"role": member.role, **(details or {})})


@transaction.atomic
def account_leaving(user: User, actor: User | None) -> None:
    """Before an account is deleted (accounts' hooks, and a backstop on pre_delete for any
    other path): it leaves each of its teams as a removed member does, in the team's log, and
    the forms it made there stay the team's, passed to its account of record. The last owner
    of a team cannot go: 409 last_owner naming the team, and nothing changes."""
    members = Membership.objects.filter(user=user).select_related("team", "user")
    for member in members.order_by("team_id"):  # one lock order for every deletion
        team = member.team
        _locked(team)
        held = team.memberships.filter(pk=member.pk).values_list("role", flat=True).first()
        if held is None:  # removed meanwhile
            continue
        member.role = held  # as it is now, under the hold
        try:
            _keep_an_owner(team, member)
        except ServiceError:
            raise ServiceError("last_owner", f"{user.email} is the last owner of the team "
                               f"“{team.name}”: make another member an owner first.",
                               status_code=409) from None
        team.forms.filter(owner_id=user.pk).update(owner_id=_forms_holder(team, user))
        _leave(team, member, actor, "member.removed", {"accountDeleted": True})


def account_deleted(sender: Any, instance: User, **kwargs: Any) -> None:
    """pre_delete of a user, whatever deletes it: leaving done already (the admin) finds no
    team left to leave. By now Django has collected what the deletion takes, the team forms
    the account made among it, so a deletion that did not hand them on first (a queryset's,
    the shell's) is refused rather than taking the team's forms with it."""
    made = Team.objects.filter(forms__owner=instance).values_list("name", flat=True).first()
    if made is not None:
        raise ServiceError("team_forms", f"{instance.email} made forms of the team “{made}”: "
                           "delete the account in the admin, which hands them on to the team.",
                           status_code=409)
    account_leaving(instance, None)


def _forms_holder(team: Team, leaving: User) -> Any:
    """Who a leaving account's team forms pass to: the team's account of record (handed on
    already by _keep_an_owner if it was the leaving one), else its longest-standing owner."""
    holder = team.account_of_record_id
    if holder is not None and holder != leaving.pk:
        return holder
    owners = team.memberships.filter(role=Role.OWNER).exclude(user=leaving)
    return owners.order_by("joined_at", "pk").values_list("user_id", flat=True).first()


@transaction.atomic
def invitation_create(*, team: Team, actor: User, email: str, role: str) -> Invitation:
    _may_manage(_held(team, actor), role)
    token = secrets.token_urlsafe(32)  # 256 random bits
    invitation = Invitation.objects.create(
        team=team, email=normalize_email(email), role=role, token_hash=token_hash(token),
        invited_by=actor, expires_at=clock.now() + INVITATION_LIFETIME,
    )
    # The broker sees only a sealed token.
    sealed = crypto.encrypt(token)
    transaction.on_commit(lambda: mails.send_invitation.delay(str(invitation.pk), sealed))
    _audit(team, actor, "member.invited", Target("invitation", invitation.pk, invitation.email),
           {"role": role})
    return invitation


@transaction.atomic
def invitation_delete(*, team: Team, invitation_id: Any, actor: User | None = None) -> None:
    try:
        invitation = team.invitations.select_for_update().get(pk=invitation_id,
                                                              accepted_at__isnull=True)
    except (Invitation.DoesNotExist, ValidationError):
        raise Http404 from None
    invitation.delete()
    _audit(team, actor, "member.invitation_withdrawn",
           Target("invitation", invitation_id, invitation.email), {"role": invitation.role})


def _invalid_invitation() -> ServiceError:
    return ServiceError("invalid_invitation",
                        "This invitation is not valid: used, withdrawn or expired.")


@transaction.atomic
def invitation_accept(*, user: User, token: str) -> Team:
    """Join the team as the invitation says; each invitation is used once."""
    invitation = (Invitation.objects.select_for_update()
                  .filter(token_hash=token_hash(token)).select_related("team").first())
    if invitation is None or invitation.accepted_at or invitation.expires_at <= clock.now():
        raise _invalid_invitation()
    if not user.is_verified or normalize_email(user.email) != invitation.email:
        raise forbidden("This invitation was sent to another address.")
    invitation.accepted_at = clock.now()
    invitation.save(update_fields=["accepted_at"])
    member, joined = Membership.objects.get_or_create(team=invitation.team, user=user,
                                                      defaults={"role": invitation.role})
    if joined:
        _audit(invitation.team, user, "member.joined", _member(member),
               {"role": member.role, "invitation": str(invitation.pk)})
    return invitation.team
