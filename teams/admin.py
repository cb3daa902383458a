from django.contrib import admin

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
class TeamAdmin(admin.ModelAdmin):
    list_display = ("name", "account_of_record", "created_at")
    list_select_related = ("account_of_record",)
    search_fields = ("name", "memberships__user__email")
    readonly_fields = ("id", "account_of_record", "created_at")
    inlines = [MembershipInline]


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
