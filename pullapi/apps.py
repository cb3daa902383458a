from django.apps import AppConfig


class PullApiConfig(AppConfig):
    name = "pullapi"
    verbose_name = "Pull API"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from pullapi import schema  # noqa: F401  (registers the OpenAPI auth extension)
