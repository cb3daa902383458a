from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import ServiceError
from operations import backup


class Command(BaseCommand):
    help = (
        "Copy the embedded SQLite database to DEST (a new file, or a folder to put one in) "
        "while the service runs. Keep SECRET_KEY and FIELD_ENCRYPTION_KEYS with it: without "
        "them its stored secrets cannot be read. On PostgreSQL use pg_dump."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("dest")

    def handle(self, *args, dest: str, **options) -> None:
        try:
            path = backup.backup(Path(dest))
        except ServiceError as error:
            raise CommandError(error.message) from None
        self.stdout.write(
            f"Backed up the database to {path} ({path.stat().st_size} bytes). Keep "
            "SECRET_KEY and FIELD_ENCRYPTION_KEYS with it (docs/operating.md)."
        )
