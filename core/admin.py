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
