from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import F

from accounts.services import usage_consume
from config.errors import ServiceError
from forms_app.models import Form
from integrations.services import deliveries_record
from submissions.models import Submission

MONTHLY_LIMIT_REACHED = ServiceError(
    "monthly_limit_reached",
    "This form's account has used its monthly submission limit.",
    status_code=403,
)


@transaction.atomic
def submission_create(
    *, form: Form, data: list[list[Any]], ip: str | None, user_agent: str, origin: str
) -> Submission:
    """Store one accepted submission, count it, and record its deliveries: all or nothing."""
    if not usage_consume(user_id=form.owner_id):
        raise MONTHLY_LIMIT_REACHED
    submission = Submission.objects.create(
        form=form,
        data=data,
        ip=ip or None,
        user_agent=user_agent[:512],
        origin=origin[:300],
    )
    Form.objects.filter(pk=form.pk).update(submission_count=F("submission_count") + 1)
    submission.form = form
    deliveries_record(submission=submission)
    return submission


@transaction.atomic
def submission_delete(*, submission: Submission) -> None:
    """Erase one submission for good (data-subject requests); monthly usage stays counted."""
    form_id = submission.form_id
    submission.delete()
    Form.objects.filter(pk=form_id, submission_count__gt=0).update(
        submission_count=F("submission_count") - 1
    )
