from django import forms
from django.contrib import admin

from audit.admin_changes import operator
from core.admin import NotDeletedOnItsOwnAdmin
from files.models import StorageUsage, StoredFile
from files.services import file_delete, storage_quota_set


@admin.register(StoredFile)
class StoredFileAdmin(admin.ModelAdmin):
    """Shown, never edited: a save would write back a key the re-encryption has moved.
    Deleted through the service, which gives the file's bytes back to the quota."""

    list_display = ("name", "size", "content_type", "owner", "form_id", "submission_id",
                    "created_at")
    list_filter = ("content_type",)
    search_fields = ("name", "sha256", "=submission_id", "=form_id", "owner__email")
    list_select_related = ("owner",)
    readonly_fields = [field.name for field in StoredFile._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False  # files arrive with submissions

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def delete_model(self, request, obj: StoredFile) -> None:
        file_delete(file_id=obj.pk, actor=operator(request))

    def delete_queryset(self, request, queryset) -> None:
        for file_id in queryset.values_list("pk", flat=True):
            file_delete(file_id=file_id, actor=operator(request))


class StorageUsageForm(forms.ModelForm):
    quota = forms.IntegerField(
        min_value=0, required=False,
        help_text="Bytes of stored files this account may hold; empty: the default "
                  "(DEFAULT_STORAGE_QUOTA_BYTES).")

    class Meta:
        model = StorageUsage
        fields = ["owner", "quota"]


@admin.register(StorageUsage)
class StorageUsageAdmin(NotDeletedOnItsOwnAdmin):
    """An operator's own quota for an account. An account that never stored a file has no
    row yet: adding one (owner and quota) sets its quota before its first upload. Not
    deleted here: the next upload would make the row again with nothing used."""

    form = StorageUsageForm
    list_display = ("owner", "used", "quota")
    search_fields = ("owner__email",)
    list_select_related = ("owner",)
    raw_id_fields = ("owner",)

    def get_readonly_fields(self, request, obj=None):
        # Bytes used are counted by uploads and deletions alone; the owner is fixed once set.
        return ("owner", "used") if obj is not None else ("used",)

    def save_model(self, request, obj: StorageUsage, form, change) -> None:
        if change and "quota" not in form.changed_data:
            return
        storage_quota_set(owner=obj.owner, quota=obj.quota, actor=operator(request))
