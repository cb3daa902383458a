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


@admin.register(StorageUsage)
class StorageUsageAdmin(admin.ModelAdmin):
    list_display = ("owner", "used", "quota")
    search_fields = ("owner__email",)
    list_select_related = ("owner",)
    readonly_fields = ("owner", "used")
