from django.core.management.base import BaseCommand

from integrations.jobs import purge


class Command(BaseCommand):
    help = (
        "Delete what FormFlow keeps only for a while: submissions past their form's "
        "retentionDays, spam after 30 days, Idempotency-Keys after 24 h, expired revoked "
        "tokens. Beat runs the same job every hour."
    )

    def handle(self, *args, **options) -> None:
        for kind, count in purge().items():
            self.stdout.write(f"{kind}: {count} deleted")
