"""One submission's page, its delivery ledger, and the moves made from it (retry a
delivery, delete, mark as spam or not)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.authentication import signed_in
from core.errors import ServiceError
from dashboard import deleted
from dashboard.auth import login_required
from dashboard.forms import DeleteSubmissionForm, MarkForm
from dashboard.naming import is_held
from dashboard.views.form_sections import folder_url, may, owned_form
from files.selectors import files_of
from integrations import selectors as integration_selectors
from integrations.delivery import retry
from integrations.models import Delivery, DeliveryState
from integrations.naming import destination
from integrations.selectors import ledger_of
from submissions.representation import submission_json
from submissions.selectors import submission_of
from submissions.services import (
    submission_delete,
    submission_mark_spam,
    submission_rescue,
    submissions_mark_read,
)
from teams.roles import Role


@login_required
def submission_detail(request: HttpRequest, form_id: str, submission_id: str) -> HttpResponse:
    """One submission: every field, its meta, its spam verdict and its delivery ledger."""
    form = owned_form(request, form_id)
    submission = submission_of(form, submission_id)
    if submission is None and deleted.was_deleted(request, submission_id):
        return render(request, "dashboard/deleted.html", {"form": form}, status=410)
    if submission is None:
        raise Http404
    if submission.read_at is None:
        submissions_mark_read(form=form, ids=[submission.pk])
    context = {
        "form": form,
        "submission": submission_json(submission, with_meta=True),
        "fields": submission.data,
        "files": files_of(submission.pk),
        "ledger": [_ledger_row(delivery) for delivery in ledger_of(submission)],
        "section": "forms",
        "may": may(form),
    }
    return render(request, "dashboard/submission.html", context)


def _ledger_row(delivery: Delivery) -> dict[str, Any]:
    state = delivery.shown_state
    held = state == DeliveryState.PENDING and is_held(delivery.last_error)
    return {
        "id": delivery.pk,
        "label": destination(delivery.integration),
        "state": "held for the hourly digest" if held else state,
        "held": held,
        "attempts": delivery.attempts,
        "last_error": None if held else delivery.last_error,
        "last_attempt_at": getattr(delivery, "last_attempt_at", None),
        "next_attempt_at": (delivery.next_attempt_at if delivery.state == DeliveryState.PENDING
                            else None),
        "retryable": state == DeliveryState.FAILED and delivery.integration.enabled,
    }


@login_required
@require_POST
def delivery_retry(
    request: HttpRequest, form_id: str, submission_id: str, delivery_id: str
) -> HttpResponse:
    form = owned_form(request, form_id, Role.EDITOR)
    submission = submission_of(form, submission_id)
    # Only a delivery of the submission this page is about: the address names all three.
    if submission is None or not integration_selectors.delivers(submission, delivery_id):
        raise Http404
    try:
        retry.delivery_retry(owner=signed_in(request), delivery_id=delivery_id)
        messages.success(request, "The delivery will be sent again, with a fresh set of tries.")
    except ServiceError as error:
        messages.error(request, error.message)
    return redirect("dashboard:submission", form.pk, submission_id)


@login_required
@require_POST
def submission_remove(request: HttpRequest, form_id: str, submission_id: str) -> HttpResponse:
    form = owned_form(request, form_id, Role.EDITOR)
    submission = submission_of(form, submission_id)
    if submission is not None:
        submission_delete(submission=submission, actor=signed_in(request))
        messages.success(request, "Submission deleted.")
    posted = DeleteSubmissionForm(request.POST)
    page = (posted.cleaned_data["page"] if posted.is_valid() else None) or 1
    response = HttpResponseRedirect(folder_url(form, submission.status if submission else
                                               "inbox", page=page if page > 1 else None))
    if submission is not None:
        deleted.remember(request, response, [submission.pk])
    return response


@login_required
@require_POST
def submission_mark(request: HttpRequest, form_id: str, submission_id: str) -> HttpResponse:
    """The "Spam" and "Not spam" buttons; both teach the filter."""
    form = owned_form(request, form_id, Role.EDITOR)
    submission = submission_of(form, submission_id)
    posted = MarkForm(request.POST)
    if not posted.is_valid():
        messages.error(request, "Choose Spam or Not spam.")
        return redirect("dashboard:form", form.pk)
    folder = posted.cleaned_data["folder"] or "inbox"
    if submission is not None:
        if posted.cleaned_data["mark"] == "spam":
            submission_mark_spam(submission=submission, actor=signed_in(request))
            messages.success(request, "Moved to spam. The filter will learn from it.")
        else:
            try:
                submission_rescue(submission=submission, actor=signed_in(request))
            except ServiceError as error:
                messages.error(request, error.message)
            else:
                messages.success(request, "Moved to the inbox, counted and delivered.")
    return HttpResponseRedirect(folder_url(form, folder))
