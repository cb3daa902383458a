from django.contrib import admin

from integrations.admin import DeliveryInline
from submissions.models import Submission


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ["id", "form", "submitted_at", "ip", "origin"]
    list_select_related = ["form"]
    search_fields = ["id", "form__slug", "form__name", "ip"]
    list_filter = ["submitted_at"]
    readonly_fields = ["id", "form", "submitted_at", "data", "ip", "user_agent", "origin"]
    date_hierarchy = "submitted_at"
    inlines = [DeliveryInline]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
