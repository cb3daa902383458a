from django.contrib import admin
from django.db import models

from audit.admin_changes import AuditedAdmin, operator
from core.admin import ChangedFieldsOnlyAdmin
from forms_app import hooks
from forms_app.models import Form
from forms_app.services import form_delete


@admin.register(Form)
class FormAdmin(AuditedAdmin, ChangedFieldsOnlyAdmin):
    audit_kind = "form"
    list_display = ["name", "slug", "owner", "submission_count", "rate_limit", "created_at"]
    list_select_related = ["owner"]
    search_fields = ["name", "slug", "owner__email"]
    # notify_owner and updated_at: which forms the 1.2.0 upgrade turned owner email off for
    # (docs/operating.md, "Owner notifications and the upgrade to 1.1.0").
    list_filter = ["notify_owner", "created_at", "updated_at"]
    readonly_fields = [
        "id",
        "slug",
        "submission_count",
        "recaptcha_enabled",
        "field_rules",  # the owner's, checked by forms_app.services; shown here, not edited
        # Moved through the API's form_move alone, which passes its limits to the team's
        # account of record and records form.moved in both logs.
        "team",
        "created_at",
        "updated_at",
    ]
    exclude = ["recaptcha_secret_encrypted"]
    raw_id_fields = ["owner"]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def get_readonly_fields(self, request, obj=None):
        # A form's owner is fixed once it exists: its limits, its files' quota and who reaches
        # it follow its account of record, which only the services keep in step (form_move,
        # teams' account of record). Handing a form to others is a move into a team.
        fixed = ["owner"] if obj is not None else []
        return [*super().get_readonly_fields(request, obj), *fixed]

    @admin.display(description="Submissions")
    def submission_count(self, form: Form) -> int:
        return hooks.annotated([form])[0].submission_count

    @admin.display(boolean=True, description="CAPTCHA")
    def recaptcha_enabled(self, form: Form) -> bool:
        return form.recaptcha_enabled

    # Through the service, so the form's uploaded files leave storage and the quota with it.
    def delete_model(self, request, obj: Form) -> None:
        form_delete(form=obj, actor=operator(request))

    def delete_queryset(self, request, queryset) -> None:
        for form in queryset:
            form_delete(form=form, actor=operator(request))
