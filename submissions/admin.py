from django.contrib import admin
from django.utils.html import format_html_join

from audit.admin_changes import operator
from submissions.models import Erasure, Submission
from submissions.representation import field_text
from submissions.services import submission_delete

# How much of a submission's values the list shows in one cell.
PREVIEW_CHARS = 120


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ["submitted_at", "form", "status", "preview", "ip", "origin"]
    list_select_related = ["form"]
    search_fields = ["id", "form__slug", "form__name", "ip"]
    list_filter = ["status", "submitted_at"]
    ordering = ["-submitted_at", "-id"]
    fields = readonly_fields = ("id", "form", "status", "arrived_at", "submitted_at", "values",
                                "ip", "user_agent", "origin", "spam", "read_at")
    date_hierarchy = "submitted_at"
    # Other apps add their rows about a submission (integrations: its deliveries).
    inlines = []

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    # Through the service, so the submission's files leave storage and the quota with it.
    def delete_model(self, request, obj: Submission) -> None:
        submission_delete(submission=obj, actor=operator(request))

    def delete_queryset(self, request, queryset) -> None:
        for submission in queryset:
            submission_delete(submission=submission, actor=operator(request))


    @admin.display(description="Values")
    def preview(self, submission: Submission) -> str:
        """Its fields as ``name: value``, as the export writes values, cut to one line."""
        text = "; ".join(f"{name}: {field_text(value)}" for name, value in submission.data)
        return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "…"

    @admin.display(description="Fields")
    def values(self, submission: Submission):
        return format_html_join(
            "", "<p><strong>{}</strong>: {}</p>",
            ((name, field_text(value)) for name, value in submission.data))

    @admin.display(description="Received at")
    def arrived_at(self, submission: Submission):
        """When it first arrived (a rescue from spam moves submitted_at, not this)."""
        return submission.received_at or submission.submitted_at

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
