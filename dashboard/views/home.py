"""The forms list (the dashboard's home) and creating a form."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST
from rest_framework import serializers

from accounts.authentication import signed_in
from core.errors import ServiceError
from dashboard.auth import login_required
from dashboard.charts import daily_bars
from dashboard.forms import NewFormForm
from dashboard.views.common import error_text, first_errors, validated
from forms_app import selectors as form_selectors
from forms_app import services as forms
from forms_app.models import Form
from forms_app.serializers import FormInputSerializer
from integrations import selectors as integration_selectors
from submissions.selectors import activity as submission_activity
from submissions.selectors import with_folder_sizes
from teams import selectors as team_selectors

PERSONAL = "personal"  # the switcher's choice of one's own forms, in no team


def _shown(user, teams: list, chosen: str) -> QuerySet[Form]:
    """The forms the switcher chose: all the user may reach, their own, or one team's."""
    reachable = form_selectors.forms_of(user).select_related("team")
    if chosen == PERSONAL:
        return reachable.filter(team__isnull=True)
    if any(str(team.pk) == chosen for team in teams):
        return reachable.filter(team_id=chosen)
    return reachable


@login_required
def home(request: HttpRequest) -> HttpResponse:
    user = signed_in(request)
    teams = list(team_selectors.teams_of(user))
    chosen = request.GET.get("team", "")
    forms_list = with_folder_sizes(_shown(user, teams, chosen))
    ids = [form.pk for form in forms_list]
    activity = submission_activity(ids, zone=timezone.get_current_timezone())
    health = integration_selectors.health_by_form(forms_list)
    rows = [
        {"form": form, "activity": activity[form.pk], "health": health[form.pk],
         "bars": daily_bars(activity[form.pk].daily, activity[form.pk].first_day),
         "total": sum(activity[form.pk].daily)}
        for form in forms_list
    ]
    context = {
        "rows": rows,
        "teams": teams,
        "chosen": chosen,
        "new_form": NewFormForm(),
        "section": "forms",
        "used": user.monthly_submission_count,
        "limit": user.effective_monthly_limit,
    }
    return render(request, "dashboard/home.html", context)


@login_required
@require_POST
def form_create(request: HttpRequest) -> HttpResponse:
    posted = NewFormForm(request.POST)
    try:
        if not posted.is_valid():
            raise serializers.ValidationError(first_errors(posted))
        values = validated(FormInputSerializer, {"name": posted.cleaned_data["name"]})
        form = forms.form_create(owner=signed_in(request), actor=signed_in(request), **values)
    except (ServiceError, serializers.ValidationError) as error:
        messages.error(request, error_text(error))
        return redirect("dashboard:home")
    messages.success(request, f"Form “{form.name}” created. Point your site's form at it.")
    return redirect("dashboard:form-setup", form.pk)
