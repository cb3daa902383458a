"""Server-rendered pages for form owners. Every write calls the same service as the API."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    QueryDict,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.template import RequestContext
from django.utils import timezone
from django.views.decorators.http import require_POST
from rest_framework import serializers

from accounts import device, registration
from accounts import services as accounts
from accounts import two_factor as accounts_two_factor
from accounts.authentication import signed_in
from accounts.device import Client
from accounts.public_pages import limited
from accounts.views import clear_auth_cookie, set_auth_cookie
from core.errors import ServiceError, flatten_details
from dashboard.auth import cookie_user, login_required, safe_next
from dashboard.charts import daily_bars
from dashboard.form_views import folder_url, owned_form
from dashboard.forms import (
    ApiKeyForm,
    ChangePasswordForm,
    DeleteSubmissionForm,
    EmailForm,
    ErasureForm,
    LoginForm,
    MarkForm,
    NewFormForm,
    ResetForm,
    SignupForm,
    TimeZoneForm,
    TwoFactorCodeForm,
    TwoFactorDisableForm,
    VerifyForm,
)
from dashboard.links import with_query
from dashboard.naming import field_label, shown_error
from dashboard.qr import qr_svg
from dashboard.reveal import reveal_once, revealed, shown
from dashboard.zones import time_zone_set
from files.selectors import files_of, usage_of
from forms_app import selectors as form_selectors
from forms_app import services as forms
from forms_app.serializers import FormInputSerializer
from integrations import kinds
from integrations import selectors as integration_selectors
from integrations import services as integrations
from integrations.clients import google
from integrations.delivery import retry
from integrations.models import Delivery, DeliveryState, Integration
from integrations.naming import destination
from integrations.selectors import ledger_of
from integrations.serializers import public_config
from pullapi import selectors as key_selectors
from pullapi import services as keys
from pullapi.models import ApiKey
from submissions import erasure
from submissions.representation import submission_json
from submissions.selectors import activity as submission_activity
from submissions.selectors import submission_of
from submissions.services import (
    submission_delete,
    submission_mark_spam,
    submission_rescue,
    submissions_mark_read,
)


def _error_text(error: ServiceError | serializers.ValidationError) -> str:
    """What went wrong, each field named as the pages label it (never the API's name)."""
    if isinstance(error, serializers.ValidationError):
        details = flatten_details(error.detail)
    elif error.details:
        details = error.details
    else:
        return error.message
    return "; ".join(text if field == "non_field_errors" else f"{field_label(field)}: {text}"
                     for field, text in details.items())


def _error_page(
    request: HttpRequest, template: str, context: dict[str, Any], error: ServiceError
) -> HttpResponse:
    """The page again, with the error's status and headers (Retry-After past a limit)."""
    response = render(request, template, context, status=error.status_code)
    for name, value in error.headers.items():
        response[name] = value
    return response


def _first_errors(form) -> dict[str, str]:
    """A Django form's errors, one message a field, in the shape the API's errors have."""
    return {name: str(errors[0]) for name, errors in form.errors.items()}


def _validated(serializer_class, data: dict[str, Any], partial: bool = False) -> dict[str, Any]:
    serializer = serializer_class(data=data, partial=partial)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


# --- Accounts -----------------------------------------------------------------------------


def _bound(form_class, request: HttpRequest, **initial: Any):
    """The page's form: bound to what was posted, or empty with ``initial``."""
    if request.method == "POST":
        return form_class(request.POST)
    return form_class(initial=initial)


def _form_page(request: HttpRequest, template: str, context: dict[str, Any]) -> HttpResponse:
    """The page again, with what was wrong by each field (400 after a post)."""
    status = 400 if context["form"].errors else 200
    return render(request, template, context, status=status)


@limited("dashboard-signup")
def signup(request: HttpRequest) -> HttpResponse:
    form = _bound(SignupForm, request)
    page = {"form": form, "registration": registration.mode()}
    if request.method == "POST":
        try:
            registration.check(request.POST.get("email"))
        except ServiceError as error:
            messages.error(request, _error_text(error))
            return _error_page(request, "dashboard/signup.html", page, error)
    if not form.is_valid():
        return _form_page(request, "dashboard/signup.html", page)
    email = form.cleaned_data["email"]
    try:
        accounts.user_sign_up(email=email, password=form.cleaned_data["password"],
                              client=Client.of(request))
    except ServiceError as error:
        messages.error(request, _error_text(error))
        return _error_page(request, "dashboard/signup.html", {"form": form}, error)
    messages.success(request, "We emailed you a 6-digit code. Enter it below.")
    return with_query("dashboard:verify", email=email)


@limited("dashboard-verify")
def verify(request: HttpRequest) -> HttpResponse:
    form = _bound(VerifyForm, request, email=request.GET.get("email", ""))
    email = request.POST.get("email") or request.GET.get("email", "")
    if not form.is_valid():
        return _form_page(request, "dashboard/verify.html", {"form": form, "email": email})
    try:
        user = accounts.user_verify_email(email=form.cleaned_data["email"],
                                          code=form.cleaned_data["code"],
                                          client=Client.of(request))
    except ServiceError as error:
        messages.error(request, _error_text(error))
        return _error_page(request, "dashboard/verify.html", {"form": form, "email": email},
                           error)
    response = redirect("dashboard:home")
    if not user.has_usable_password():
        messages.warning(request, NO_PASSWORD_YET)
        response = redirect("dashboard:account")
    set_auth_cookie(response, accounts.token_for(user))
    device.remember(response, user)  # a sign-in like any other: this browser is the owner's
    return response


NO_PASSWORD_YET = (
    "Your address is verified, but this account has no password yet: more than one sign-up "
    "for this address brought different passwords, so none of them was kept. Set one below."
)


@limited("dashboard-resend")
@require_POST
def resend(request: HttpRequest) -> HttpResponse:
    form = EmailForm(request.POST)
    email = request.POST.get("email", "")
    try:
        if form.is_valid():
            accounts.user_resend_code(email=form.cleaned_data["email"],
                                      client=Client.of(request))
    except ServiceError as error:  # the worker cannot be reached
        messages.error(request, _error_text(error))
    else:
        messages.info(request, "If that address needs verification, a new code is on its way.")
    return with_query("dashboard:verify", email=email)


@limited("dashboard-login")
def login(request: HttpRequest) -> HttpResponse:
    next_url = safe_next(request)
    if request.method != "POST" and cookie_user(request):
        return HttpResponseRedirect(next_url)
    form = _bound(LoginForm, request, next=next_url)
    if not form.is_valid():
        return _form_page(request, "dashboard/login.html", {"form": form, "next": next_url})
    email = form.cleaned_data["email"]
    try:
        user = accounts.user_authenticate(email=email, password=form.cleaned_data["password"],
                                          client=Client.of(request),
                                          otp=form.cleaned_data["otp"] or None)
    except ServiceError as error:
        messages.error(request, _error_text(error))
        if error.code == "email_not_verified":
            return with_query("dashboard:verify", email=email)
        context = {"form": form, "next": next_url}
        return _error_page(request, "dashboard/login.html", context, error)
    response = HttpResponseRedirect(next_url)
    set_auth_cookie(response, accounts.token_for(user))
    device.remember(response, user)
    return response


@require_POST
def logout(request: HttpRequest) -> HttpResponse:
    accounts.token_revoke_if_valid(request.COOKIES.get(settings.AUTH_COOKIE_NAME))
    response = redirect("dashboard:login")
    clear_auth_cookie(response)
    return response


@limited("dashboard-forgot")
def forgot_password(request: HttpRequest) -> HttpResponse:
    form = _bound(EmailForm, request)
    if not form.is_valid():
        return _form_page(request, "dashboard/forgot.html", {"form": form})
    email = form.cleaned_data["email"]
    try:
        accounts.user_forgot_password(email=email, client=Client.of(request))
    except ServiceError as error:  # the worker cannot be reached
        messages.error(request, _error_text(error))
        return _error_page(request, "dashboard/forgot.html", {"form": form}, error)
    messages.info(request, "If that address has an account, we emailed it a 6-digit code.")
    return with_query("dashboard:reset-password", email=email)


@limited("dashboard-reset")
def reset_password(request: HttpRequest) -> HttpResponse:
    form = _bound(ResetForm, request, email=request.GET.get("email", ""))
    if not form.is_valid():
        return _form_page(request, "dashboard/reset.html", {"form": form})
    try:
        accounts.user_reset_password(
            email=form.cleaned_data["email"],
            code=form.cleaned_data["code"],
            password=form.cleaned_data["password"],
            client=Client.of(request),
        )
    except ServiceError as error:
        messages.error(request, _error_text(error))
        return _error_page(request, "dashboard/reset.html", {"form": form}, error)
    messages.success(request, "Your password was changed. Log in with the new one.")
    return redirect("dashboard:login")


def _account_context(request: HttpRequest, form: ChangePasswordForm | None = None) -> dict:
    user = signed_in(request)
    has_password = user.has_usable_password()
    if form is None:
        form = ChangePasswordForm(has_password=has_password)
    return {"section": "account", "form": form, "no_password_yet": not has_password,
            "no_password_text": NO_PASSWORD_YET, **_storage(request)}


@login_required
def account(request: HttpRequest) -> HttpResponse:
    return render(request, "dashboard/account.html", _account_context(request))


def _storage(request: HttpRequest) -> dict[str, int]:
    used, quota = usage_of(signed_in(request).pk)
    return {"storage_used": used, "storage_quota": quota}


@login_required
@require_POST
def change_password(request: HttpRequest) -> HttpResponse:
    form = ChangePasswordForm(request.POST, has_password=signed_in(request).has_usable_password())
    context = _account_context(request, form)
    if not form.is_valid():
        return _form_page(request, "dashboard/account.html", context)
    try:
        user = accounts.user_change_password(
            user=signed_in(request),
            current_password=form.cleaned_data.get("currentPassword"),
            new_password=form.cleaned_data["newPassword"],
            client=Client.of(request),
        )
    except ServiceError as error:
        messages.error(request, f"Password not changed. {_error_text(error)}")
        return _error_page(request, "dashboard/account.html", context, error)
    messages.success(request, "Password changed. Every other session was logged out.")
    response = redirect("dashboard:account")
    set_auth_cookie(response, accounts.token_for(user))
    return response


@login_required
def two_factor_page(request: HttpRequest) -> HttpResponse:
    user = signed_in(request)
    context = {"section": "account", "enabled": accounts_two_factor.is_enabled(user),
               "left": accounts_two_factor.recovery_codes_left(user),
               "form": TwoFactorDisableForm()}
    return render(request, "dashboard/two_factor.html", context)


@login_required
@require_POST
def two_factor_setup(request: HttpRequest) -> HttpResponse:
    """A new secret waiting for its first code; the page that shows it is a GET."""
    try:
        accounts_two_factor.setup(user=signed_in(request))
    except ServiceError as error:
        messages.error(request, error.message)
        return redirect("dashboard:two-factor")
    return redirect("dashboard:two-factor-new")


@login_required
def two_factor_new(request: HttpRequest) -> HttpResponse:
    """The pending secret as a QR code drawn on the page, and the form for its first code."""
    waiting = accounts_two_factor.pending(signed_in(request))
    if waiting is None:
        return redirect("dashboard:two-factor")
    secret, uri = waiting
    context = {"section": "account", "secret": secret, "qr": qr_svg(uri),
               "form": TwoFactorCodeForm()}
    return render(request, "dashboard/two_factor_setup.html", context)


@login_required
@require_POST
def two_factor_enable(request: HttpRequest) -> HttpResponse:
    user = signed_in(request)
    try:
        codes = accounts_two_factor.enable(user=user, code=request.POST.get("code", ""))
    except ServiceError as error:
        messages.error(request, f"{error.message} Try the app's newest code.")
        return redirect("dashboard:two-factor-new")
    # The recovery codes reach the next page once, in the reveal cookie, never stored in clear.
    response = reveal_once(redirect("dashboard:two-factor-codes"), user.pk,
                           codes=" ".join(codes))
    set_auth_cookie(response, accounts.token_for(user))  # every other session was logged out
    return response


@login_required
def two_factor_codes(request: HttpRequest) -> HttpResponse:
    """The recovery codes, shown on the page the enable redirected to, and never again."""
    codes = revealed(request).get("codes", "").split()
    if not codes:
        return redirect("dashboard:two-factor")
    response = render(request, "dashboard/two_factor_codes.html",
                      {"section": "account", "codes": codes})
    return shown(request, response)


@login_required
@require_POST
def two_factor_disable(request: HttpRequest) -> HttpResponse:
    form = TwoFactorDisableForm(request.POST)
    user = signed_in(request)
    context = {"section": "account", "enabled": True, "form": form,
               "left": accounts_two_factor.recovery_codes_left(user)}
    if not form.is_valid():
        return _form_page(request, "dashboard/two_factor.html", context)
    try:
        accounts_two_factor.disable(user=user, password=form.cleaned_data["password"],
                                    code=form.cleaned_data["code"], client=Client.of(request))
    except ServiceError as error:
        messages.error(request, _error_text(error))
        return _error_page(request, "dashboard/two_factor.html", context, error)
    messages.success(request, "Two-step sign-in is off. Every other session was logged out.")
    response = redirect("dashboard:two-factor")
    set_auth_cookie(response, accounts.token_for(user))
    return response


@login_required
@require_POST
def account_time_zone(request: HttpRequest) -> HttpResponse:
    """The Account page's time zone, or the browser's on a first visit (``auto``)."""
    posted = TimeZoneForm(request.POST)
    if not posted.is_valid():
        messages.error(request, "Choose a time zone from the list.")
        return redirect("dashboard:account")
    auto = posted.cleaned_data["auto"]
    stored = time_zone_set(user=signed_in(request), name=posted.cleaned_data["timeZone"],
                           only_if_unset=auto)
    if stored and not auto:
        messages.success(request, f"Times are now shown in {posted.cleaned_data['timeZone']}.")
    return redirect("dashboard:account")


@login_required
@require_POST
def logout_everywhere(request: HttpRequest) -> HttpResponse:
    accounts.user_log_out_everywhere(user=signed_in(request))
    messages.success(request, "You were logged out on every device.")
    response = redirect("dashboard:login")
    clear_auth_cookie(response)
    return response


@login_required
def home(request: HttpRequest) -> HttpResponse:
    user = signed_in(request)
    forms_list = form_selectors.with_folder_sizes(form_selectors.forms_of(user))
    ids = [form.pk for form in forms_list]
    activity = submission_activity(ids, zone=timezone.get_current_timezone())
    health = integration_selectors.health_by_form(user, ids)
    rows = [
        {"form": form, "activity": activity[form.pk], "health": health[form.pk],
         "bars": daily_bars(activity[form.pk].daily, activity[form.pk].first_day),
         "total": sum(activity[form.pk].daily)}
        for form in forms_list
    ]
    context = {
        "rows": rows,
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
            raise serializers.ValidationError(_first_errors(posted))
        values = _validated(FormInputSerializer, {"name": posted.cleaned_data["name"]})
        form = forms.form_create(owner=signed_in(request), **values)
    except (ServiceError, serializers.ValidationError) as error:
        messages.error(request, _error_text(error))
        return redirect("dashboard:home")
    messages.success(request, f"Form “{form.name}” created. Point your site's form at it.")
    return redirect("dashboard:form-setup", form.pk)


@login_required
def submission_detail(request: HttpRequest, form_id: str, submission_id: str) -> HttpResponse:
    """One submission: every field, its meta, its spam verdict and its delivery ledger."""
    form = owned_form(request, form_id)
    submission = submission_of(form, submission_id)
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
    }
    return render(request, "dashboard/submission.html", context)


def _ledger_row(delivery: Delivery) -> dict[str, Any]:
    state = delivery.shown_state
    return {
        "id": delivery.pk,
        "label": destination(delivery.integration),
        "state": state,
        "attempts": delivery.attempts,
        "last_error": delivery.last_error,
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
    form = owned_form(request, form_id)
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
    form = owned_form(request, form_id)
    submission = submission_of(form, submission_id)
    if submission is not None:
        submission_delete(submission=submission)
        messages.success(request, "Submission deleted.")
    posted = DeleteSubmissionForm(request.POST)
    page = (posted.cleaned_data["page"] if posted.is_valid() else None) or 1
    return HttpResponseRedirect(folder_url(form, submission.status if submission else "inbox",
                                           page=page if page > 1 else None))


@login_required
@require_POST
def submission_mark(request: HttpRequest, form_id: str, submission_id: str) -> HttpResponse:
    """The "Spam" and "Not spam" buttons; both teach the filter."""
    form = owned_form(request, form_id)
    submission = submission_of(form, submission_id)
    posted = MarkForm(request.POST)
    if not posted.is_valid():
        messages.error(request, "Choose Spam or Not spam.")
        return redirect("dashboard:form", form.pk)
    folder = posted.cleaned_data["folder"] or "inbox"
    if submission is not None:
        if posted.cleaned_data["mark"] == "spam":
            submission_mark_spam(submission=submission)
            messages.success(request, "Moved to spam. The filter will learn from it.")
        else:
            try:
                submission_rescue(submission=submission)
            except ServiceError as error:
                messages.error(request, error.message)
            else:
                messages.success(request, "Moved to the inbox, counted and delivered.")
    return HttpResponseRedirect(folder_url(form, folder))


# --- Integrations -------------------------------------------------------------------------


def _integrations_page(request: HttpRequest, status: int = 200, typed: QueryDict | None = None,
                       **extra: Any) -> HttpResponse:
    """The integrations and a card to add each kind; ``typed`` is a create that failed, whose
    card is filled again with what was typed."""
    rows = integration_selectors.integrations_of(request.user)
    forms_list = form_selectors.forms_of(signed_in(request))
    cards = [
        kind.card.render(RequestContext(request, {
            "forms": forms_list, "google_configured": google.configured(),
            "typed": _typed_into(kind, typed),
        }))
        for kind in kinds.KINDS.values() if kind.card is not None
    ]
    context = {
        "integrations": [
            (row, public_config(row), kinds.get(row.type), destination(row)) for row in rows
        ],
        "forms": forms_list,
        "cards": cards,
        "section": "integrations",
        **extra,
    }
    if request.GET.get("connected"):
        messages.success(request, "Google Sheets is connected.")
    if request.GET.get("error"):
        messages.error(request, f"Google Sheets was not connected ({request.GET['error']}).")
    return render(request, "dashboard/integrations.html", context, status=status)


def _typed_into(kind: kinds.Kind, typed: QueryDict | None) -> dict[str, Any]:
    """What was typed into this kind's card, each list (the events) whole. Its secrets are
    typed again, as a password input is never filled in by the page (the settings' too)."""
    if typed is None or typed.get("type") != kind.type:
        return {}
    return {name: values if name == "events" else values[-1]
            for name, values in typed.lists()
            if name not in kind.secret_keys and name != "csrfmiddlewaretoken"}


@login_required
def integrations_page(request: HttpRequest) -> HttpResponse:
    return shown(request, _integrations_page(request, new_secret=revealed(request).get("secret")))


def _integration_config(post) -> dict[str, Any]:
    """The card's config through its kind's form; the service checks it as the API's."""
    kind = kinds.KINDS.get(post.get("type", ""))
    if kind is None or kind.form is None:
        return {}
    posted = kind.form(post)
    if not posted.is_valid():
        raise serializers.ValidationError(_first_errors(posted))
    return posted.config()


@login_required
@require_POST
def integration_create(request: HttpRequest) -> HttpResponse:
    try:
        integration = integrations.integration_create(
            owner=signed_in(request),
            type=request.POST.get("type", ""),
            config=_integration_config(request.POST),
            form_id=request.POST.get("formId") or None,
        )
    except (ServiceError, serializers.ValidationError) as error:
        messages.error(request, f"Integration not created. {_error_text(error)}")
        return _integrations_page(request, status=400, typed=request.POST)
    messages.success(request, f"{destination(integration)}: integration created.")
    response = redirect("dashboard:integrations")
    secret = integration.secrets.get("signingSecret")
    if secret:
        # Shown once, on the page the redirect lands on, and kept nowhere else.
        reveal_once(response, request.user.pk, secret=secret)
    return response


def _owned_integration(request: HttpRequest, integration_id: str) -> Integration:
    return get_object_or_404(Integration, pk=integration_id, owner=request.user, hook=False)


@login_required
@require_POST
def integration_toggle(request: HttpRequest, integration_id: str) -> HttpResponse:
    integration = _owned_integration(request, integration_id)
    integrations.integration_update(integration=integration, enabled=not integration.enabled)
    state = "enabled" if integration.enabled else "disabled"
    messages.success(request, f"{destination(integration)}: {state}.")
    return redirect("dashboard:integrations")


@login_required
@require_POST
def integration_test(request: HttpRequest, integration_id: str) -> HttpResponse:
    try:
        success, message = integrations.integration_send_test(
            integration=_owned_integration(request, integration_id)
        )
    except ServiceError as error:  # too many test sends
        success, message = False, error.message
    failed = message.removeprefix("Test event failed: ")
    if not success and failed != message:
        # In words here; the recorded text is under the integration's status, one click away.
        message = f"Test event not delivered. {shown_error(failed).summary}"  # type: ignore[union-attr]
    (messages.success if success else messages.error)(request, message)
    return redirect("dashboard:integrations")


@login_required
@require_POST
def integration_retry(request: HttpRequest, integration_id: str) -> HttpResponse:
    integration = _owned_integration(request, integration_id)
    if not integration.enabled:
        messages.error(request, "Enable the integration first: a disabled one receives nothing.")
        return redirect("dashboard:integrations")
    count = retry.deliveries_retry(integration_id=integration.pk)
    if count:
        messages.success(request, f"{count} failed deliveries will be sent again.")
    else:
        messages.success(request, "There are no failed deliveries to send again.")
    return redirect("dashboard:integrations")


@login_required
@require_POST
def integration_remove(request: HttpRequest, integration_id: str) -> HttpResponse:
    integration = _owned_integration(request, integration_id)
    integrations.integration_delete(integration=integration)
    messages.success(request, f"{destination(integration)}: deleted.")
    return redirect("dashboard:integrations")


@login_required
def google_connect(request: HttpRequest) -> HttpResponse:
    if not google.configured():
        messages.error(request, "Google Sheets is not configured on this server.")
        return redirect("dashboard:integrations")
    form_id = request.GET.get("formId")
    suffix = f"?formId={form_id}" if form_id else ""
    return HttpResponseRedirect(f"/api/auth/google/login{suffix}")


# --- API keys -----------------------------------------------------------------------------


def _keys_page(request: HttpRequest, status: int = 200, key_form: ApiKeyForm | None = None,
               **extra: Any) -> HttpResponse:
    rows = key_selectors.api_keys_of(request.user)
    owned = list(form_selectors.forms_of(signed_in(request)))
    context = {
        "keys": rows,
        "forms": owned,
        "key_form": key_form or ApiKeyForm(owned=owned),
        "section": "keys",
        **extra,
    }
    return render(request, "dashboard/api_keys.html", context, status=status)


@login_required
def api_keys(request: HttpRequest) -> HttpResponse:
    return shown(request, _keys_page(request, new_key=revealed(request).get("key")))


@login_required
@require_POST
def api_key_create(request: HttpRequest) -> HttpResponse:
    posted = ApiKeyForm(request.POST, owned=form_selectors.forms_of(signed_in(request)))
    if not posted.is_valid():
        messages.error(request, "Give the key a name and choose at least one form.")
        return _keys_page(request, status=400, key_form=posted)
    values = posted.cleaned_data
    try:
        api_key, plain = keys.api_key_create(
            owner=signed_in(request), name=values["name"], forms=values["forms"],
            scopes=["read", "hooks"] if values["hooks"] else ["read"])
    except ServiceError as error:
        messages.error(request, _error_text(error))
        return _keys_page(request, status=400, key_form=posted)
    messages.success(request, f"API key “{api_key.name}” created. Copy it now: it is shown once.")
    return reveal_once(redirect("dashboard:api-keys"), request.user.pk, key=plain)


@login_required
@require_POST
def api_key_revoke(request: HttpRequest, key_id: str) -> HttpResponse:
    api_key = get_object_or_404(ApiKey, pk=key_id, owner=request.user)
    keys.api_key_revoke(api_key=api_key)
    messages.success(request, f"API key “{api_key.name}” revoked.")
    return redirect("dashboard:api-keys")


# --- Erasure by address ---------------------------------------------------------------------


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
        messages.error(request, _error_text(error))
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
                                         email=form.cleaned_data["email"])
    except ServiceError as error:
        messages.error(request, f"Nothing was erased. {_error_text(error)}")
        return _erasure_page(request, form, status=error.status_code)
    noun = "submission" if receipt.submissions == 1 else "submissions"
    messages.success(request, f"Erased {receipt.submissions} {noun} holding "
                              f"{receipt.email_hint}.")
    return redirect("dashboard:erasure")
