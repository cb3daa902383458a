from django.apps import AppConfig


class FormsConfig(AppConfig):
    name = "forms_app"
    label = "forms_app"
    verbose_name = "Forms"
    default_auto_field = "django.db.models.BigAutoField"
