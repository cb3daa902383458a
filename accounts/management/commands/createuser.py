import getpass
import sys

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email

from accounts import registration
from core.errors import ServiceError


class Command(BaseCommand):
    help = (
        "Make a verified account, whatever REGISTRATION says. Asks for its password twice; "
        "--password-stdin reads it from the first line of standard input (scripts)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--email", required=True)
        parser.add_argument("--staff", action="store_true",
                            help="an operator: may sign in to /admin/ (a superuser)")
        parser.add_argument("--password-stdin", action="store_true",
                            help="read the password from standard input, not a prompt")

    def handle(self, *args, email: str, staff: bool, password_stdin: bool, **options) -> None:
        try:
            validate_email(email)
        except ValidationError:
            raise CommandError(f"'{email}' is not an email address.") from None
        password = self.password(password_stdin)
        try:
            user = registration.user_create_verified(email=email, password=password, staff=staff)
        except ServiceError as error:
            problem = "; ".join((error.details or {}).values()) or error.message
            raise CommandError(problem) from None
        role = "staff account" if staff else "account"
        self.stdout.write(f"Created the verified {role} {user.email}.")

    def password(self, from_stdin: bool) -> str:
        if from_stdin:
            return sys.stdin.readline().rstrip("\r\n")
        first = getpass.getpass("Password: ")
        if getpass.getpass("Password (again): ") != first:
            raise CommandError("The two passwords differ.")
        return first
