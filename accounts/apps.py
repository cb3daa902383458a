from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # schema registers the OpenAPI auth extension. The mail tasks live in mails.py, where
        # Celery's discovery (<app>.tasks) does not look: registered here, under the names
        # they always had.
        from accounts import mails, schema  # noqa: F401
