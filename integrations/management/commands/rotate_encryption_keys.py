from django.core.management.base import BaseCommand

from integrations.jobs import secrets_reencrypt


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored secret under the first FIELD_ENCRYPTION_KEYS key. Put the new "
        "key first, keep the old ones after it, run this, then the old keys may be removed."
    )

    def handle(self, *args, **options) -> None:
        count = secrets_reencrypt()
        self.stdout.write(f"Re-encrypted {count} secrets under the first key.")
