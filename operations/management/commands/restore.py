import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import ServiceError
from operations import backup


class Command(BaseCommand):
    help = (
        "Put back the database and the stored files of an archive made by `manage.py backup` "
        "(SOURCE: its path, or - for standard input), "
        "into an empty database and an empty uploads folder (anything else is refused). Run it "
        "with the SECRET_KEY and FIELD_ENCRYPTION_KEYS of the installation that made it, then "
        "`manage.py migrate`."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("source")

    def handle(self, *args, source: str, **options) -> None:
        try:
            if source == "-":
                summary = backup.restore_from_stream(sys.stdin.buffer)
            else:
                summary = backup.restore(Path(source))
        except ServiceError as error:
            raise CommandError(error.message) from None
        files = ("no files (they are in the S3 store)" if summary.files is None
                 else f"{summary.files} stored files")
        self.stdout.write(
            f"Restored the {summary.database} database and {files} from {summary.path}. Next: "
            "manage.py migrate, then manage.py status."
        )
