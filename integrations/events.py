"""The events integrations receive: a stored submission, the change of one (deleted, marked
spam: kept whole in the delivery, since the submission may be gone), or a sample for the test
button."""

from __future__ import annotations

from typing import Any, cast

from core import clock
from core.timefmt import iso
from files.selectors import files_of, shown
from forms_app.models import Form
from integrations.models import CREATED, TEST, Delivery, Integration
from submissions.models import Submission

SAMPLE_FIELDS = [
    ["name", "Ada Lovelace"],
    ["email", "ada@example.com"],
    ["message", "This is a test event from FormFlow."],
]


def submission_event(submission: Submission) -> dict[str, Any]:
    form = submission.form
    return {
        "type": CREATED,
        "timestamp": iso(submission.submitted_at),
        "data": {
            "id": str(submission.pk),
            "formId": str(form.pk),
            "formSlug": form.slug,
            "formName": form.name,
            "submittedAt": iso(submission.submitted_at),
            "fields": dict(submission.data),
            **_files(submission),
        },
    }


def _files(submission: Submission) -> dict[str, Any]:
    """``files`` when the form's submissions carry them, with links signed now (at the
    attempt, so a retry hours later still sends links that work for an hour)."""
    if not shown(submission.form):
        return {}
    return {"files": files_of(submission.pk)}


def test_event(integration: Integration) -> dict[str, Any]:
    form = integration.form
    now = iso(clock.now())
    return {
        "type": TEST,
        "timestamp": now,
        "data": {
            "id": "test",
            "formId": str(form.pk) if form else None,
            "formSlug": form.slug if form else None,
            "formName": form.name if form else "Test form",
            "submittedAt": now,
            "fields": dict(SAMPLE_FIELDS),
        },
    }


def change_event(event_type: str, form: Form, submission_id) -> dict[str, Any]:
    """A submission's deletion or spam mark: who it was, never what it held."""
    return {
        "type": event_type,
        "timestamp": iso(clock.now()),
        "data": {
            "id": str(submission_id),
            "formId": str(form.pk),
            "formSlug": form.slug,
            "formName": form.name,
        },
    }


def event_for(delivery: Delivery) -> dict[str, Any]:
    if delivery.event_type == TEST:
        return test_event(delivery.integration)
    if delivery.event_type == CREATED and delivery.submission is not None:
        return submission_event(delivery.submission)
    if delivery.payload is None:  # a worker's batch loads deliveries without it
        delivery.payload = Delivery.objects.values_list("payload", flat=True).get(pk=delivery.pk)
    return cast(dict[str, Any], delivery.payload)
