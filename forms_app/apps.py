from django.apps import AppConfig


class FormsConfig(AppConfig):
    name = "forms_app"
    label = "forms_app"
    verbose_name = "Forms"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts.models import User
        from core.infra import versions
        from forms_app.models import Form

        # What the public endpoint keeps of a form and its owner (forms_app/form_cache.py).
        versions.watch(Form)
        versions.watch(User)
