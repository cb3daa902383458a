"""What integrations do when a submission changes, registered on submissions' hooks at start
(submissions/hooks.py): an accepted submission gets one delivery per matching integration, a
spam mark drops those still waiting and tells downstream, a deletion is announced."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from forms_app.models import Form
from integrations import announce
from integrations.delivery.enqueue import (
    deliveries_drop_pending,
    deliveries_hold,
    deliveries_insert,
    deliveries_queue,
    deliveries_record,
)
from submissions.models import Submission


class Deliveries:
    def accepted_sql(self, submission_id: Any, owner_id: Any, form_id: Any, *,
                     only_if: str) -> tuple[str, list]:
        return deliveries_insert(submission_id, owner_id, form_id, only_if=only_if)

    def accepted_committed(self, ids: list) -> None:
        if ids:
            deliveries_queue(ids)

    def accepted(self, submission: Submission, *, again: bool) -> None:
        deliveries_record(submission=submission, missing_only=again)

    def marked_spam(self, form: Form, submission_id: Any, *, was_inbox: bool) -> None:
        # Asked before its waiting deliveries are dropped, and announced after.
        announced = was_inbox and announce.went_out(submission_id)
        deliveries_drop_pending(submission_id=submission_id)
        if announced:
            announce.submission_marked_spam(form, submission_id)

    def deleting(self, submission_ids: list) -> None:
        deliveries_hold(Q(submission_id__in=submission_ids))

    def deleted(self, form: Form, submission_ids: list) -> None:
        announce.submissions_deleted(form, submission_ids)
