"""The events integrations receive: a stored submission, or a sample for the test button."""

from __future__ import annotations

from typing import Any

from config import clock
from config.timefmt import iso
from files.selectors import files_of, shown
from integrations.models import Delivery, Integration
from submissions.models import Submission

SAMPLE_FIELDS = [
    ["name", "Ada Lovelace"],
    ["email", "ada@example.com"],
    ["message", "This is a test event from FormFlow."],
]


def submission_event(submission: Submission) -> dict[str, Any]:
    form = submission.form
    return {
        "type": "submission.created",
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
        "type": "integration.test",
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


def event_for(delivery: Delivery) -> dict[str, Any]:
    if delivery.submission is None:
        return test_event(delivery.integration)
    return submission_event(delivery.submission)
