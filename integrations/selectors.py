"""Read-side queries about integrations."""

from django.db.models import Count, Q

from integrations.models import DeliveryState, Integration


def failed_deliveries_count() -> Count:
    """Annotation: an integration's submission deliveries that gave up (tests are not counted)."""
    return Count(
        "deliveries",
        filter=Q(deliveries__state=DeliveryState.FAILED, deliveries__submission__isnull=False),
    )


def failed_deliveries_of(integration: Integration) -> int:
    return integration.deliveries.filter(
        state=DeliveryState.FAILED, submission__isnull=False
    ).count()

