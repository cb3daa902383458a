from django.contrib import admin

from integrations.admin import DeliveryInline
from submissions.models import Erasure, Submission
from submissions.services import submission_delete


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

    # Through the service, so the submission's files leave storage and the quota with it.
    def delete_model(self, request, obj: Submission) -> None:
        submission_delete(submission=obj)

    def delete_queryset(self, request, queryset) -> None:
        for submission in queryset:
            submission_delete(submission=submission)


@admin.register(Erasure)
class ErasureAdmin(admin.ModelAdmin):
    """Receipts of erasures by address: what an operator may show when asked, never the
    address (only its hash and its last 4 characters are kept)."""

    list_display = ["id", "owner", "email_hint", "submissions", "created_at"]
    list_select_related = ["owner"]
    search_fields = ["owner__email", "email_hash"]
    list_filter = ["created_at"]
    readonly_fields = ["id", "owner", "email_hint", "email_hash", "submissions", "created_at"]

    def has_add_permission(self, request) -> bool:
        return False  # an erasure is made by the owner, through the service

    def has_change_permission(self, request, obj=None) -> bool:
        return False
