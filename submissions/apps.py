from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "submissions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import hooks as accounts_hooks
        from forms_app import hooks as forms_hooks
        from submissions import on_forms
        from submissions.intake import admission, control_fields
        from submissions.selectors import with_folder_sizes

        # An operator's reset of the monthly quota reaches intake's counter, in admission's
        # own transaction under the month's locks.
        accounts_hooks.register_usage_reset(admission.reset)
        # The forms forms_app's API and admin show carry their folders' sizes.
        forms_hooks.register_annotator(with_folder_sizes)
        # A deleted form's submissions and files go with it. Registered before integrations'
        # receiver (INSTALLED_APPS order), which holds their deliveries after them.
        forms_hooks.register_deleting(on_forms.FormSubmissions())
        # A field rule may not name a field intake never keeps.
        forms_hooks.register_unkept_names(control_fields.HIDDEN)
