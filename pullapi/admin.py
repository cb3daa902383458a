from django.contrib import admin, messages
from django.db.models import QuerySet

from pullapi import services
from pullapi.models import ApiKey


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "owner", "scopes", "created_at", "last_used_at",
                    "revoked_at"]
    list_select_related = ["owner"]
    list_filter = ["revoked_at", "created_at"]
    search_fields = ["name", "prefix", "owner__email"]
    readonly_fields = ["id", "owner", "prefix", "scopes", "created_at", "last_used_at",
                       "revoked_at"]
    exclude = ["key_hash"]
    filter_horizontal = ["forms"]
    actions = ["revoke_keys"]

    def has_add_permission(self, request) -> bool:
        return False  # keys are created by their owners (or `createapikey`), shown once

    @admin.action(description="Revoke the selected API keys")
    def revoke_keys(self, request, queryset: QuerySet[ApiKey]) -> None:
        for api_key in queryset:
            services.api_key_revoke(api_key=api_key)
        self.message_user(request, f"Revoked {queryset.count()} API keys.", messages.SUCCESS)
