from typing import Any

from django.contrib import admin
from django.db import transaction

from audit.admin_changes import AuditedAdmin, operator
from teams import services
from teams.models import Invitation, Membership, Team


# Read-only: roles change through teams/services.py, which keeps an owner and takes a
# removed member's keys, notifications and subscriptions with them.
class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    can_delete = False
    readonly_fields = ("user", "role", "joined_at")

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Team)
class TeamAdmin(AuditedAdmin):
    """A rename or a deletion here is in the team's log, as the API's are."""

    audit_kind = "team"
    list_display = ("name", "account_of_record", "created_at")
    list_select_related = ("account_of_record",)
    search_fields = ("name", "memberships__user__email")
    readonly_fields = ("id", "account_of_record", "created_at")
    inlines = [MembershipInline]

    def audit_owner(self, obj: Team) -> Any:
        return obj.account_of_record

    def audit_team(self, obj: Team) -> Any:
        return obj.pk


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ("email", "team", "role", "created_at", "expires_at", "accepted_at")
    list_select_related = ("team",)
    list_filter = ("role", "accepted_at")
    search_fields = ("email", "team__name")
    # The token is never stored; its hash is of no use to an operator.
    exclude = ("token_hash",)
    readonly_fields = ("id", "team", "email", "role", "invited_by", "created_at", "expires_at",
                       "accepted_at")

    def has_add_permission(self, request) -> bool:
        return False  # an invitation is made through the API, which mails its link

    def delete_model(self, request, obj: Invitation) -> None:
        # An open one is withdrawn as the team's admins withdraw it, in the team's log; a used
        # one is only the record of a join that stays.
        if obj.accepted_at is None:
            services.invitation_delete(team=obj.team, invitation_id=obj.pk,
                                       actor=operator(request))
        else:
            super().delete_model(request, obj)

    def delete_queryset(self, request, queryset) -> None:
        for invitation in queryset:
            with transaction.atomic():
                self.delete_model(request, invitation)
