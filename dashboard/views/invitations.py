"""The page behind the link in a team's invitation mail (teams/mails.py). Opening it changes
nothing, since mail scanners fetch links; its one button, pressed by the invited address
signed in, joins the team through the same service as the API's accept."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts.authentication import signed_in
from accounts.models import normalize_email
from core.errors import ServiceError
from dashboard.auth import login_required
from dashboard.views.confirm import with_referrer_policy
from teams import selectors, services

TEMPLATE = "dashboard/invitation.html"


@require_http_methods(["GET", "HEAD", "POST"])
@with_referrer_policy
@login_required
def invitation(request: HttpRequest, token: str) -> HttpResponse:
    user = signed_in(request)
    found = selectors.open_invitation(token)
    if found is None:
        return _refused(request, "invalid", 400)
    if normalize_email(user.email) != found.email:
        return _refused(request, "another_address", 403)
    if request.method != "POST":
        return render(request, TEMPLATE, {"invitation": found})
    try:
        team = services.invitation_accept(user=user, token=token)
    except ServiceError as error:  # used or withdrawn a moment before this press
        problem = "another_address" if error.status_code == 403 else "invalid"
        return _refused(request, problem, error.status_code)
    messages.success(request, f"You joined the team “{team.name}” as {found.role}.")
    return redirect("dashboard:home")


def _refused(request: HttpRequest, problem: str, status: int) -> HttpResponse:
    # Alike for a used, a withdrawn, an expired and an unknown token: it names no team.
    return render(request, TEMPLATE, {"problem": problem}, status=status)
