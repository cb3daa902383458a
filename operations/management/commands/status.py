import json

from django.core.management.base import BaseCommand

from operations import readiness


class Command(BaseCommand):
    help = "Print the readiness checks of /readyz as JSON; exit 1 when not ready."

    def handle(self, *args, **options) -> None:
        report = readiness.report()
        self.stdout.write(json.dumps(report, indent=2))
        if report["status"] != "ok":
            raise SystemExit(1)
