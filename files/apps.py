from django.apps import AppConfig
from django.db.models.signals import post_delete


class FilesConfig(AppConfig):
    name = "files"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from files.models import StoredFile
        from files.services import file_row_deleted

        # A row deleted by a cascade (an account deleted) runs no code of ours but this.
        post_delete.connect(file_row_deleted, sender=StoredFile,
                            dispatch_uid="files.file_row_deleted")
