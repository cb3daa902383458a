"""A form's pages: its sections (Inbox, Spam, Setup, Integrations, Settings), each its own
address, and the writes they make. Every write answers with a redirect, so a reload repeats
nothing; only a settings save that fails answers with the page again (400), keeping what was
typed."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST
from rest_framework import serializers

from accounts.authentication import signed_in
from accounts.models import User
from core.errors import ServiceError, flatten_details
from dashboard import deleted
from dashboard.auth import login_required
from dashboard.charts import daily_chart
from dashboard.forms import (
    BulkForm,
    FormSettingsForm,
    SearchForm,
    add_rule_errors,
    rules_api_values,
    rules_formset,
)
from dashboard.snippet import html_snippet
from dashboard.views.home import PERSONAL
from forms_app import access
from forms_app import services as forms
from forms_app.models import Form
from forms_app.serializers import FormInputSerializer
from integrations import selectors as integration_selectors
from submissions import export
from submissions.representation import submission_json
from submissions.selectors import activity as submission_activity
from submissions.selectors import (
    search_page,
    submissions_chosen,
    submissions_page,
    with_folder_sizes,
)
from submissions.services import (
    submission_mark_spam,
    submission_rescue,
    submissions_delete,
    submissions_exported,
    submissions_mark_read,
)
from teams import selectors as team_selectors
from teams.roles import Role, allows

PAGE_SIZE = 20
# A form's sections, in the order of its tabs: (key, tab, page name).
SECTIONS = [
    ("inbox", "Inbox", "dashboard:form"),
    ("spam", "Spam", "dashboard:form-spam"),
    ("setup", "Setup", "dashboard:form-setup"),
    ("integrations", "Integrations", "dashboard:form-integrations"),
    ("settings", "Settings", "dashboard:form-settings"),
]


def owned_form(request: HttpRequest, form_id: str, needed: str = Role.VIEWER) -> Form:
    """The form, if the signed-in user's role on it includes ``needed`` (forms_app/access.py):
    404 without a role on it, the 403 page with one too low."""
    try:
        return access.form_for(signed_in(request), form_id, needed)
    except ServiceError as error:
        raise PermissionDenied(error.message) from None


def may(form: Form) -> dict[str, bool]:
    """What the page's buttons may offer, by the caller's role on the form."""
    role = access.role_on(form)
    return {"edit": allows(role, Role.EDITOR), "administer": allows(role, Role.ADMIN)}


def _section_page(request: HttpRequest, form: Form, tab: str, template: str,
                  status: int = 200, **extra: Any) -> HttpResponse:
    tabs = [(key, label, reverse(name, args=[form.pk])) for key, label, name in SECTIONS]
    context = {"form": with_folder_sizes([form])[0], "tab": tab, "tabs": tabs,
               "section": "forms", "role": access.role_on(form), "may": may(form), **extra}
    return render(request, template, context, status=status)


def folder_url(form: Form, folder: str, **query: Any) -> str:
    name = "dashboard:form-spam" if folder == "spam" else "dashboard:form"
    url = reverse(name, args=[form.pk])
    query = {key: value for key, value in query.items() if value}
    return f"{url}?{urlencode(query)}" if query else url


def _page_number(request: HttpRequest) -> int:
    try:
        return max(1, int(request.GET.get("page", 1)))
    except ValueError:
        return 1


@login_required
def form_inbox(request: HttpRequest, form_id: str, folder: str = "inbox") -> HttpResponse:
    form = owned_form(request, form_id)
    if request.GET.get("folder") == "spam":  # the address the page had before its tabs
        folder = "spam"
    page = _page_number(request)
    search_form = SearchForm(request.GET, zone=timezone.get_current_timezone())
    search = search_form.search()
    if search:
        result = search_page(form, search, page=page, limit=PAGE_SIZE, status=folder)
    else:
        result = submissions_page(form, page=page, limit=PAGE_SIZE, status=folder)
    searched = search_form.cleaned_data if search else {}
    activity = submission_activity([form.pk], zone=timezone.get_current_timezone())[form.pk]
    return _section_page(
        request, form, folder, "dashboard/form_inbox.html",
        folder=folder,
        search_form=search_form,
        searching=bool(search),
        capped=result.capped,
        # The search's part of every link on the page that keeps it: pages, exports.
        search_query=urlencode({name: value for name, value in searched.items() if value}),
        rows=[(submission_json(row, with_meta=True), row.read_at) for row in result.rows],
        page=page,
        total_pages=max(1, result.total_pages),
        total=result.total,
        chart=daily_chart(activity.daily, activity.first_day) if folder == "inbox" else None,
        bulk_form=BulkForm(),
    )


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def form_setup(request: HttpRequest, form_id: str) -> HttpResponse:
    """GET: the endpoint, the field rules' editor and the snippets built from the rules.
    POST: save the rules and come back; if they are wrong, the page again with what was
    typed, each problem on the row and input it names."""
    form = owned_form(request, form_id, Role.EDITOR if request.method == "POST" else Role.VIEWER)
    if request.method != "POST":
        return _setup_page(request, form, *rules_formset(form))
    rules, extras = rules_formset(form, request.POST)
    if not (rules.is_valid() and extras.is_valid()):
        return _setup_failed(request, form, rules, extras, [])
    values, rows = rules_api_values(rules, extras)
    try:
        checked = FormInputSerializer(data=values, partial=True)
        checked.is_valid(raise_exception=True)
        forms.form_update(form=form, actor=signed_in(request), **checked.validated_data)
    except serializers.ValidationError as error:
        unplaced = add_rule_errors(rows, flatten_details(error.detail))
        return _setup_failed(request, form, rules, extras, unplaced)
    except ServiceError as error:  # what only the form's other settings show (its honeypot)
        unplaced = add_rule_errors(rows, error.details or {"": error.message})
        return _setup_failed(request, form, rules, extras, unplaced, error.status_code)
    messages.success(request, "Fields saved.")
    return redirect("dashboard:form-setup", form.pk)


def _setup_failed(request: HttpRequest, form: Form, rules, extras, unplaced: list[str],
                  status: int = 400) -> HttpResponse:
    problems = "; ".join([*unplaced, *[str(error) for error in rules.non_form_errors()],
                          *_row_problems(rules)])
    messages.error(request, f"Fields not saved. {problems}".strip())
    return _setup_page(request, form, rules, extras, status=status)


def _row_problems(rules) -> list[str]:
    """Each row's first problem per input, as the page labels them: "Field 2, Type: ..."."""
    found = []
    for number, row in enumerate(rules.forms, start=1):
        for name, errors in row.errors.items():
            where = f"Field {number}, {row.fields[name].label}" if name in row.fields else (
                f"Field {number}")
            found.append(f"{where}: {errors[0]}")
    return found


def _setup_page(request: HttpRequest, form: Form, rules, extras, status: int = 200
                ) -> HttpResponse:
    return _section_page(request, form, "setup", "dashboard/form_setup.html", status=status,
                         rules=rules, extras=extras, snippet=html_snippet(form))


@login_required
def form_integrations(request: HttpRequest, form_id: str) -> HttpResponse:
    form = owned_form(request, form_id)
    rows = integration_selectors.integrations_for_form(form)
    return _section_page(request, form, "integrations", "dashboard/form_integrations.html",
                         integrations=rows)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def form_settings(request: HttpRequest, form_id: str) -> HttpResponse:
    """GET: the settings. POST: save them and come back here; if they are wrong, the page
    again with what was typed, each problem by its field, named as the page names it."""
    form = owned_form(request, form_id, Role.EDITOR if request.method == "POST" else Role.VIEWER)
    if request.method != "POST":
        return _settings_page(request, form, FormSettingsForm(form=form))
    posted = FormSettingsForm(request.POST, form=form)
    if not posted.is_valid():
        return _settings_failed(request, form, posted, 400)
    try:
        values = FormInputSerializer(data=posted.api_values(), partial=True)
        values.is_valid(raise_exception=True)
        forms.form_update(form=form, actor=signed_in(request), **values.validated_data)
    except serializers.ValidationError as error:
        posted.add_api_errors(flatten_details(error.detail))
        return _settings_failed(request, form, posted, 400)
    except ServiceError as error:
        posted.add_api_errors(error.details or {"": error.message})
        return _settings_failed(request, form, posted, error.status_code)
    messages.success(request, "Settings saved.")
    return redirect("dashboard:form-settings", form.pk)


def _settings_failed(request: HttpRequest, form: Form, posted: FormSettingsForm,
                     status: int) -> HttpResponse:
    # Each problem is a sentence of its own ("Files per submission: Enter 10 at most.").
    named = " ".join(f"{label}: {text}" if label else text
                     for label, text in posted.labelled_errors())
    messages.error(request, f"Settings not saved. {named}".strip())
    return _settings_page(request, form, posted, status)


def _settings_page(request: HttpRequest, form: Form, settings_form: FormSettingsForm,
                   status: int = 200) -> HttpResponse:
    here = str(form.team_id or PERSONAL)
    targets = move_targets(signed_in(request), form) if may(form)["administer"] else []
    if all(value == here for value, _ in targets):
        targets = []  # nowhere else to go: no move to offer
    return _section_page(request, form, "settings", "dashboard/form_settings.html",
                         status=status, settings_form=settings_form, move_targets=targets,
                         here=here)


def move_targets(user: User, form: Form) -> list[tuple[str, str]]:
    """Where the caller may move a form, by forms_app.access.team_to_admin's rule: back to
    its creator's own forms (the creator only), or a team where the caller is admin."""
    personal = [(PERSONAL, "Personal (the creator's own forms)")] if form.owner_id == user.pk \
        else []
    return personal + [(str(team.pk), f"Team {team.name}")
                       for team in team_selectors.teams_of(user)
                       if allows(team_selectors.caller_role(team), Role.ADMIN)]


def _chosen_team(chosen: str) -> uuid.UUID | None:
    if chosen == PERSONAL:
        return None
    try:
        return uuid.UUID(chosen)
    except ValueError:
        raise Http404 from None  # no team of the caller's, as the API's team_not_found


@login_required
@require_POST
def form_move(request: HttpRequest, form_id: str) -> HttpResponse:
    """As the API's PATCH {teamId}: admin on the form and on the team it goes to; a team the
    caller is not in is a 404, a role too low the 403 page. Recorded by the service."""
    form = owned_form(request, form_id, Role.ADMIN)
    try:
        team = access.team_to_admin(signed_in(request), _chosen_team(request.POST.get("team", "")),
                                    form)
    except ServiceError as error:
        if error.status_code == 403:
            raise PermissionDenied(error.message) from None
        raise Http404 from None
    if (team.pk if team else None) == form.team_id:
        messages.info(request, "The form is already there; nothing was moved.")
        return redirect("dashboard:form-settings", form.pk)
    forms.form_move(form=form, team=team, actor=signed_in(request))
    where = f"the team “{team.name}”" if team else "its creator's own forms"
    messages.success(request, f"Form “{form.name}” moved to {where}.")
    return redirect("dashboard:form-settings", form.pk)


@login_required
def form_export(request: HttpRequest, form_id: str) -> StreamingHttpResponse:
    """The inbox as CSV or JSON, as the API's export, narrowed by the page's search or by the
    submissions chosen in it."""
    form = owned_form(request, form_id)
    kind = "json" if request.GET.get("format") == "json" else "csv"
    chosen = BulkForm(request.GET)
    ids = tuple(chosen.cleaned_data["ids"]) if chosen.is_valid() else ()
    search = SearchForm(request.GET, zone=timezone.get_current_timezone()).search(ids=ids)
    submissions_exported(form=form, kind=kind, matching=search is not None,
                         actor=signed_in(request))
    return export.attachment(form, kind, search, for_spreadsheets=True)


@login_required
@require_POST
def form_delete(request: HttpRequest, form_id: str) -> HttpResponse:
    form = owned_form(request, form_id, Role.ADMIN)
    forms.form_delete(form=form, actor=signed_in(request))
    messages.success(request, f"Form “{form.name}” and its submissions were deleted.")
    return redirect("dashboard:home")


BULK_DONE = {
    "spam": "{n} moved to spam. The filter will learn from them.",
    "not-spam": "{n} moved to the inbox, counted and delivered.",
    "delete": "{n} deleted.",
    "read": "{n} marked read.",
    "unread": "{n} marked unread.",
}


@login_required
@require_POST
def submissions_bulk(request: HttpRequest, form_id: str) -> HttpResponse:
    """The inbox's bulk buttons over the chosen submissions; back to the same page. Exporting
    the chosen is a viewer's, every other action an editor's."""
    exporting = request.POST.get("action") == "export"
    form = owned_form(request, form_id, Role.VIEWER if exporting else Role.EDITOR)
    posted = BulkForm(request.POST)
    if not posted.is_valid() or not posted.cleaned_data["action"]:
        messages.error(request, "Choose one or more submissions, then an action.")
        return HttpResponseRedirect(folder_url(form, request.POST.get("folder", "inbox")))
    action, ids = posted.cleaned_data["action"], posted.cleaned_data["ids"]
    if action == "export":  # the download is a GET of its own, so the token stays out of it
        query = urlencode({"format": "csv", "ids": [str(ident) for ident in ids]}, doseq=True)
        return HttpResponseRedirect(f"{reverse('dashboard:form-export', args=[form.pk])}?{query}")
    count = _bulk(form, action, ids, signed_in(request))
    noun = f"{count} submission{'s' if count != 1 else ''}"
    messages.success(request, BULK_DONE[action].format(n=noun))
    response = HttpResponseRedirect(folder_url(form, posted.cleaned_data["folder"] or "inbox",
                                               page=posted.cleaned_data["page"]))
    if action == "delete":
        deleted.remember(request, response, ids)
    return response


def _bulk(form: Form, action: str, ids: list, actor: User) -> int:
    if action == "delete":
        return submissions_delete(form=form, ids=ids, actor=actor)
    if action in ("read", "unread"):
        return submissions_mark_read(form=form, ids=ids, read=action == "read")
    if action == "spam":
        chosen = submissions_chosen(form, ids, status="inbox")
        for submission in chosen:
            submission_mark_spam(submission=submission, actor=actor)
        return len(chosen)
    moved = 0
    for submission in submissions_chosen(form, ids, status="spam"):
        try:
            submission_rescue(submission=submission, actor=actor)
        except ServiceError:
            break  # the monthly limit is reached: the rest stay in spam
        moved += 1
    return moved
