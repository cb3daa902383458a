from django import forms
from django.contrib import admin

from files.models import StorageUsage, StoredFile


@admin.register(StoredFile)
class StoredFileAdmin(admin.ModelAdmin):
    list_display = ("name", "size", "content_type", "owner", "form_id", "submission_id",
                    "created_at")
    list_filter = ("content_type",)
    search_fields = ("name", "sha256", "=submission_id", "=form_id", "owner__email")
    list_select_related = ("owner",)
    readonly_fields = [field.name for field in StoredFile._meta.fields]


class StorageUsageForm(forms.ModelForm):
    quota = forms.IntegerField(
        min_value=0, required=False,
        help_text="Bytes of stored files this account may hold; empty: the default "
                  "(DEFAULT_STORAGE_QUOTA_BYTES).")

    class Meta:
        model = StorageUsage
        fields = ["owner", "quota"]


@admin.register(StorageUsage)
class StorageUsageAdmin(admin.ModelAdmin):
    """An operator's own quota for an account. An account that never stored a file has no
    row yet: adding one (owner and quota) sets its quota before its first upload."""

    form = StorageUsageForm
    list_display = ("owner", "used", "quota")
    search_fields = ("owner__email",)
    list_select_related = ("owner",)
    raw_id_fields = ("owner",)

    def get_readonly_fields(self, request, obj=None):
        # Bytes used are counted by uploads and deletions alone; the owner is fixed once set.
        return ("owner", "used") if obj is not None else ("used",)
