from django.apps import AppConfig


class TeamsConfig(AppConfig):
    name = "teams"
    verbose_name = "Teams"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import hooks
        from teams import selectors

        # An invitation to a team lets its address sign up when REGISTRATION is invite.
        hooks.register_invitation_check(selectors.has_open_invitation)
