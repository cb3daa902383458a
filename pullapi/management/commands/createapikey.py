from django.core.management.base import BaseCommand, CommandError

from accounts.models import User, normalize_email
from core.errors import ServiceError
from pullapi.services import api_key_create


class Command(BaseCommand):
    help = (
        "Create an API key for a user's forms and print it (shown only once): read-only for "
        "the pull API, and with --scope hooks also for REST hook subscriptions."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--user", required=True, help="the owner's email address")
        parser.add_argument("--name", required=True, help="a name to recognise the key by")
        parser.add_argument(
            "--form",
            action="append",
            required=True,
            dest="forms",
            help="a form slug or id the key may read; repeat for several forms",
        )
        parser.add_argument(
            "--scope", action="append", dest="scopes", default=["read"],
            choices=["read", "hooks"], help="add 'hooks' for REST hook subscriptions",
        )

    def handle(self, *args, user: str, name: str, forms: list[str], scopes: list[str],
               **options) -> None:
        owner = User.objects.filter(email=normalize_email(user)).first()
        if owner is None:
            raise CommandError(f"No user with the email {user}.")
        try:
            api_key, plain = api_key_create(owner=owner, name=name, forms=forms, scopes=scopes)
        except ServiceError as error:
            raise CommandError(next(iter((error.details or {}).values()), error.message)) from None
        self.stderr.write(
            f"Created API key '{api_key.name}' ({api_key.prefix}…) for {api_key.forms.count()} "
            "form(s). Store it now: it is not shown again."
        )
        self.stdout.write(plain)
