"""What the drop-in tests share (contract, "Drop-in"): a form whose owner is notified, as one
made through the API is, and the owner's notifications."""

from __future__ import annotations

import pytest
from django.core import mail

from forms_app.models import Form
from submissions.models import Submission


@pytest.fixture
def notified(owner_api) -> Form:
    response = owner_api.post("/api/v1/forms", {"name": "Contact", "spamFilter": "off"},
                              format="json")
    assert response.status_code == 201
    return Form.objects.get(pk=response.json()["_id"])


def notifications(owner_email: str) -> list:
    """The mails sent so far; each one must go to the owner alone."""
    for message in mail.outbox:
        assert message.recipients() == [owner_email], message.recipients()
    return list(mail.outbox)


def stored() -> list[dict]:
    return [dict(row.data) for row in Submission.objects.order_by("submitted_at")]
