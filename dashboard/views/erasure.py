"""Erasure by address: what would go, then the erasure and its receipts."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.authentication import signed_in
from core.errors import ServiceError
from dashboard.auth import login_required
from dashboard.forms import ErasureForm
from dashboard.views.common import error_text
from submissions import erasure


def _erasure_page(request: HttpRequest, form: ErasureForm, status: int = 200,
                  preview: dict[str, Any] | None = None) -> HttpResponse:
    owner = signed_in(request)
    if preview is not None:
        names = {str(pk): name for pk, name in owner.forms.values_list("pk", "name")}
        preview["form_names"] = [names[form_id] for form_id in preview["forms"]]
    context = {"form": form, "preview": preview, "receipts": erasure.erasures_of(owner)[:50],
               "section": "account"}
    return render(request, "dashboard/erasure.html", context, status=status)


@login_required
def erasure_page(request: HttpRequest) -> HttpResponse:
    """GET: the form, and with ``?email=`` what an erasure would delete (nothing is deleted
    until the confirmation is posted)."""
    if "email" not in request.GET:
        return _erasure_page(request, ErasureForm())
    form = ErasureForm(request.GET)
    if not form.is_valid():
        return _erasure_page(request, form, status=400)
    try:
        preview = erasure.erasure_preview(owner=signed_in(request),
                                          email=form.cleaned_data["email"])
    except ServiceError as error:
        messages.error(request, error_text(error))
        return _erasure_page(request, form, status=error.status_code)
    return _erasure_page(request, form, preview=preview)


@login_required
@require_POST
def erasure_confirm(request: HttpRequest) -> HttpResponse:
    form = ErasureForm(request.POST)
    if not form.is_valid():
        return _erasure_page(request, form, status=400)
    try:
        receipt = erasure.erasure_create(owner=signed_in(request),
                                         email=form.cleaned_data["email"],
                                         actor=signed_in(request))
    except ServiceError as error:
        messages.error(request, f"Nothing was erased. {error_text(error)}")
        return _erasure_page(request, form, status=error.status_code)
    noun = "submission" if receipt.submissions == 1 else "submissions"
    messages.success(request, f"Erased {receipt.submissions} {noun} holding "
                              f"{receipt.email_hint}.")
    return redirect("dashboard:erasure")
