from django.contrib import admin

from audit.models import Entry


@admin.register(Entry)
class EntryAdmin(admin.ModelAdmin):
    """Read-only: an operator reads the log, and nobody adds, changes or deletes an entry."""

    list_display = ["at", "action", "actor_email", "owner", "target_type", "target_name"]
    list_select_related = ["owner"]
    list_filter = ["action", "target_type", "at"]
    search_fields = ["actor_email", "owner__email", "target_id", "target_name", "action"]
    date_hierarchy = "at"
    ordering = ["-at", "-id"]
    readonly_fields = [field.name for field in Entry._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
