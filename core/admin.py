from django.contrib import admin


class ChangedFieldsOnlyAdmin(admin.ModelAdmin):
    """Saves only the fields the operator changed.

    Counters and statuses (monthly usage, submission counts, delivery health) move under
    live traffic while the change page is open; a full save would write the old values back.
    """

    def save_model(self, request, obj, form, change) -> None:
        if not change:
            return super().save_model(request, obj, form, change)
        concrete = {field.name for field in obj._meta.concrete_fields}
        fields = [name for name in form.changed_data if name in concrete]
        if fields:
            obj.save(update_fields=fields)


class NotDeletedOnItsOwnAdmin(admin.ModelAdmin):
    """Rows an operator cannot delete on their own admin pages (no delete page, link or bulk
    action), which still go with what they belong to: Django's delete page for an account,
    a form or a submission asks this admin's permission for each row the deletion collects,
    and refusing there would refuse the whole deletion."""

    def has_delete_permission(self, request, obj=None) -> bool:
        match = getattr(request, "resolver_match", None)
        own_pages = f"{self.opts.app_label}_{self.opts.model_name}_"
        if match is not None and (match.url_name or "").startswith(own_pages):
            return False
        return super().has_delete_permission(request, obj)
