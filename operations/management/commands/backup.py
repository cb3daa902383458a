from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import ServiceError
from operations import backup


class Command(BaseCommand):
    help = (
        "Write one archive to DEST (a new file, or a folder to put one in) with the database "
        "and every stored file, while the service runs. Keep SECRET_KEY and "
        "FIELD_ENCRYPTION_KEYS apart from it: without them its secrets and files cannot be read."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("dest")

    def handle(self, *args, dest: str, **options) -> None:
        try:
            summary = backup.backup(Path(dest))
        except ServiceError as error:
            raise CommandError(error.message) from None
        files = ("no files: they are in the S3 store, back the bucket up with its versioning"
                 if summary.files is None else f"{summary.files} stored files")
        self.stdout.write(
            f"Backed up the {summary.database} database and {files} to {summary.path} "
            f"({summary.path.stat().st_size} bytes). Keep SECRET_KEY and FIELD_ENCRYPTION_KEYS "
            "apart from it (docs/operating.md)."
        )
