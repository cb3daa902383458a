import uuid

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_datetime

from forms_app.models import Form
from forms_app.selectors import form_lookup
from integrations.delivery.retry import deliveries_retry


def moment(value: str | None):
    if value is None:
        return None
    parsed = parse_datetime(value)
    if parsed is None or parsed.tzinfo is None:
        raise CommandError(f"'{value}' is not an ISO 8601 time with a zone (e.g. ...Z).")
    return parsed


class Command(BaseCommand):
    help = "Re-queue failed deliveries, with a fresh set of attempts. Filters combine."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--integration", help="an integration id")
        parser.add_argument("--form", help="a form id or slug")
        parser.add_argument("--since", help="failed deliveries created at or after (ISO 8601)")
        parser.add_argument("--until", help="failed deliveries created before (ISO 8601)")

    def handle(self, *args, integration=None, form=None, since=None, until=None, **options):
        if integration:
            try:
                uuid.UUID(integration)
            except ValueError:
                raise CommandError(f"'{integration}' is not an integration id.") from None
        form_obj = None
        if form:
            form_obj = Form.objects.filter(form_lookup(form)).first()
            if form_obj is None:
                raise CommandError(f"No form named '{form}'.")
        count = deliveries_retry(
            integration_id=integration, form=form_obj, since=moment(since), until=moment(until)
        )
        self.stdout.write(f"Re-queued {count} failed deliveries.")
