from django.core.management.base import BaseCommand

from files.services import files_reencrypt
from integrations.jobs import secrets_reencrypt


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored secret and every stored file under the first "
        "FIELD_ENCRYPTION_KEYS key (files stored in plaintext before 1.2.0 are encrypted). Put "
        "the new key first, keep the old ones after it, run this, then the old keys may be "
        "removed once it reports no file it could not re-encrypt."
    )

    def handle(self, *args, **options) -> None:
        count = secrets_reencrypt()
        self.stdout.write(f"Re-encrypted {count} secrets under the first key.")
        files = files_reencrypt()
        self.stdout.write(
            f"Files: {files.sealed} encrypted (were plaintext), {files.rekeyed} re-encrypted "
            f"under the first key, {files.failed} could not be re-encrypted (see the log).")
