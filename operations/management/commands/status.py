import json

from django.core.management.base import BaseCommand

from operations import status

# The exit status, for scripts and cron jobs: 0 ok, 1 degraded, 2 unavailable.
EXIT_CODES = {"ok": 0, "degraded": 1, "unavailable": 2}


class Command(BaseCommand):
    help = ("Print the installation's status (as GET /status) as JSON; exit 1 when degraded, "
            "2 when unavailable.")

    def handle(self, *args, **options) -> None:
        report = status.report()
        self.stdout.write(json.dumps(report, indent=2))
        if report["status"] != "ok":
            raise SystemExit(EXIT_CODES[report["status"]])
