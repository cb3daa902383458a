from django.apps import AppConfig


class TeamsConfig(AppConfig):
    name = "teams"
    verbose_name = "Teams"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import pre_delete

        from accounts import hooks
        from accounts.models import User
        from teams import selectors, services

        # An invitation to a team lets its address sign up when REGISTRATION is invite.
        hooks.register_invitation_check(selectors.has_open_invitation)
        # An account deleted leaves its teams first, each keeping an owner (the admin asks
        # before it collects what the deletion takes, so the forms stay the team's).
        hooks.register_account_leaving(services.account_leaving)
        # Any other deletion (a queryset's, the shell's): the last owner of a team stays.
        pre_delete.connect(services.account_deleted, sender=User, dispatch_uid="teams:account")
