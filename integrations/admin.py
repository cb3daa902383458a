from django.contrib import admin, messages
from django.db.models import QuerySet

from audit.admin_changes import AuditedAdmin, operator
from audit.services import Target
from core.admin import ChangedFieldsOnlyAdmin, NotDeletedOnItsOwnAdmin
from integrations import services
from integrations.delivery import retry
from integrations.models import Delivery, DeliveryAttempt, DeliveryState, Integration
from integrations.naming import destination
from integrations.serializers import public_config
from submissions.admin import SubmissionAdmin


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class DeliveryInline(ReadOnlyInline):
    model = Delivery
    fields = ("event_type", "integration", "state", "attempts", "next_attempt_at", "last_error")
    readonly_fields = fields
    ordering = ["-created_at"]


# A submission's page lists its deliveries: added here, as submissions does not import
# integrations.
SubmissionAdmin.inlines = [*SubmissionAdmin.inlines, DeliveryInline]


class DeliveryAttemptInline(ReadOnlyInline):
    model = DeliveryAttempt
    show_change_link = False
    fields = ("number", "started_at", "duration_ms", "succeeded", "status_code", "error")
    readonly_fields = fields


@admin.register(Integration)
class IntegrationAdmin(AuditedAdmin, ChangedFieldsOnlyAdmin):
    list_display = ["id", "type", "hook", "owner", "form", "enabled", "status", "last_run_at",
                    "last_error"]
    list_select_related = ["owner", "form"]
    list_filter = ["type", "hook", "enabled", "status"]
    search_fields = ["id", "owner__email", "form__slug"]
    readonly_fields = [
        "id",
        "type",
        "owner",
        "form",
        "masked_config",
        "created_at",
        "status",
        "last_run_at",
        "last_error",
    ]
    fields = [
        "id",
        "type",
        "owner",
        "form",
        "enabled",
        "masked_config",
        "created_at",
        "status",
        "last_run_at",
        "last_error",
    ]
    actions = ["disable_integrations"]
    inlines = [DeliveryInline]

    @admin.display(description="Config (secrets masked)")
    def masked_config(self, integration: Integration) -> dict:
        return public_config(integration)

    def has_add_permission(self, request) -> bool:
        return False  # owners create integrations; secrets never pass through the admin

    def audit_team(self, obj: Integration) -> object:
        return obj.form.team_id if obj.form is not None else None  # as services.audit_entry

    def audit_target(self, obj: Integration) -> Target:
        return Target("subscription" if obj.hook else "integration", obj.pk, destination(obj))

    @admin.action(description="Disable the selected integrations")
    def disable_integrations(self, request, queryset: QuerySet[Integration]) -> None:
        for integration in queryset:
            services.integration_disable(integration=integration, actor=operator(request))
        self.message_user(request, f"Disabled {queryset.count()} integrations.", messages.SUCCESS)


class LedgerAdmin(NotDeletedOnItsOwnAdmin):
    """The delivery ledger is a record (contract, "Notifications and the delivery ledger"):
    shown, never added, changed or deleted here. A save would also write back a state and
    attempts a worker has moved since the page was read. Its rows go with their submission,
    form, integration or account, through those deletions."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Delivery)
class DeliveryAdmin(LedgerAdmin):
    list_display = [
        "id",
        "event_type",
        "integration",
        "submission",
        "state",
        "attempts",
        "next_attempt_at",
        "last_error",
        "created_at",
    ]
    list_select_related = ["integration"]
    list_filter = ["state", "event_type", "integration__type"]
    ordering = ["-created_at", "-id"]
    search_fields = ["id", "integration__id", "submission__id", "integration__owner__email"]
    readonly_fields = [field.name for field in Delivery._meta.fields]
    date_hierarchy = "created_at"
    actions = ["retry_failed"]
    inlines = [DeliveryAttemptInline]

    @admin.action(description="Retry the selected failed deliveries")
    def retry_failed(self, request, queryset: QuerySet[Delivery]) -> None:
        failed = list(queryset.filter(state=DeliveryState.FAILED).values_list("pk", flat=True))
        count = retry.deliveries_retry(delivery_ids=failed)
        self.message_user(request, f"Re-queued {count} failed deliveries.", messages.SUCCESS)


@admin.register(DeliveryAttempt)
class DeliveryAttemptAdmin(LedgerAdmin):
    list_display = [
        "delivery",
        "number",
        "started_at",
        "duration_ms",
        "succeeded",
        "status_code",
        "error",
    ]
    list_select_related = ["delivery"]
    list_filter = ["succeeded", "status_code"]
    search_fields = ["delivery__id"]
    readonly_fields = [field.name for field in DeliveryAttempt._meta.fields]
