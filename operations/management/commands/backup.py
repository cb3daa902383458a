import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import ServiceError
from operations import backup


class Command(BaseCommand):
    help = (
        "Write one archive to DEST (a new file, a folder to put one in, or - for standard "
        "output) with the database and every stored file, while the service runs. Keep "
        "SECRET_KEY and FIELD_ENCRYPTION_KEYS apart from it: without them its secrets and "
        "files cannot be read."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("dest")

    def handle(self, *args, dest: str, **options) -> None:
        try:
            if dest == "-":
                summary = backup.backup_to_stream(sys.stdout.buffer)
            else:
                summary = backup.backup(Path(dest))
        except ServiceError as error:
            raise CommandError(error.message) from None
        files = ("no files: they are in the S3 store, back the bucket up with its versioning"
                 if summary.files is None else f"{summary.files} stored files")
        where = ("standard output" if dest == "-"
                 else f"{summary.path} ({summary.path.stat().st_size} bytes)")
        # With the archive on standard output, the summary goes to standard error.
        said = self.stderr if dest == "-" else self.stdout
        said.write(f"Backed up the {summary.database} database and {files} to {where}. Keep "
                   "SECRET_KEY and FIELD_ENCRYPTION_KEYS apart from it (docs/operating.md).",
                   style_func=None)
