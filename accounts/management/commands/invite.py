from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email

from accounts import registration


class Command(BaseCommand):
    help = (
        "Invite an address to sign up while REGISTRATION=invite; the invitation lasts 7 days. "
        "Inviting it again renews it."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("email")

    def handle(self, *args, email: str, **options) -> None:
        try:
            validate_email(email)
        except ValidationError:
            raise CommandError(f"'{email}' is not an email address.") from None
        invitation = registration.invitation_create(email=email)
        self.stdout.write(
            f"Invited {invitation.email} until {invitation.expires_at:%Y-%m-%d %H:%M} UTC."
        )
        if registration.mode() != registration.INVITE:
            self.stdout.write(f"Note: REGISTRATION is {registration.mode()}, not invite.")
