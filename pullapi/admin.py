from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet

from audit.admin_changes import AuditedAdmin, operator
from forms_app import access
from pullapi import services
from pullapi.models import ApiKey
from teams.roles import Role


class ApiKeyForm(forms.ModelForm):
    class Meta:
        model = ApiKey
        fields = ["name", "forms"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if "forms" in self.fields:  # only forms the key's owner may make keys for
            field = self.fields["forms"]
            field.queryset = access.reachable(  # type: ignore[attr-defined]
                self.instance.owner_id, Role.ADMIN)


@admin.register(ApiKey)
class ApiKeyAdmin(AuditedAdmin):
    audit_kind = "api_key"
    form = ApiKeyForm
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

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)  # the key's forms are set here
        ended = services.api_key_forms_changed(api_key=form.instance,
                                                 actor=operator(request))
        if ended:
            self.message_user(
                request, f"Ended {ended} subscriptions on forms the key no longer holds.",
                messages.WARNING)

    def delete_model(self, request, obj: ApiKey) -> None:
        services.api_key_deleting(api_key=obj, actor=operator(request))
        super().delete_model(request, obj)  # recorded as api_key.deleted

    def has_add_permission(self, request) -> bool:
        return False  # keys are created by their owners (or `createapikey`), shown once

    @admin.action(description="Revoke the selected API keys")
    def revoke_keys(self, request, queryset: QuerySet[ApiKey]) -> None:
        for api_key in queryset:
            services.api_key_revoke(api_key=api_key, actor=operator(request))
        self.message_user(request, f"Revoked {queryset.count()} API keys.", messages.SUCCESS)
