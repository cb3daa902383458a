"""The dashboard's forms, as Django forms: each field's input, label, id and browser
hints in one place, and the same names the templates and the API use.

They check only what the browser is told (present, not too long); the account services
check the rest (a valid address, a strong password, the code) and say why in the API's
words, which the pages show."""

from __future__ import annotations

import math
import re
import uuid
from datetime import UTC, tzinfo
from decimal import Decimal
from typing import cast

from django import forms

from audit.actions import ACTIONS, FAMILY_LABELS
from dashboard.naming import form_label
from dashboard.zones import zone_names
from forms_app.limits import MAX_FILE_BYTES, MAX_FILES
from forms_app.models import CaptchaProvider
from submissions import search

MB = 1024 * 1024  # sizes are shown and entered in MB of 1,048,576 bytes (25 MB = the limit)
# What a form's uploads take when the owner ticks "Keep uploaded files" and nothing more.
DEFAULT_MAX_BYTES = 10 * MB
DEFAULT_MAX_FILES = 3
DEFAULT_TYPES = ("image/*", "application/pdf")

# Ids are the field names (email, password, ...), so labels and tests stay stable.
AUTO_ID = "%s"
NEW_PASSWORD_HINT = "At least 8 characters, not all digits, not a common password."


def email_field() -> forms.CharField:
    return forms.CharField(
        label="Email", max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )


def code_field() -> forms.CharField:
    field = forms.CharField(
        label="Code", max_length=64,
        widget=forms.TextInput(attrs={"inputmode": "numeric", "pattern": "[0-9]{6}",
                                      "autocomplete": "one-time-code"}),
    )
    field.widget.attrs["maxlength"] = "6"  # the browser's hint; a wrong code is the service's
    return field


def new_password_field(label: str, field_id: str = "password") -> forms.CharField:
    return forms.CharField(
        label=label, max_length=256, strip=False, help_text=NEW_PASSWORD_HINT,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password", "minlength": "8",
                                          "id": field_id,
                                          "aria-describedby": f"{field_id}-hint"}),
    )


class DashboardForm(forms.Form):
    """Ids are the field names and labels carry no suffix, on every dashboard form."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("auto_id", AUTO_ID)
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


class SignupForm(DashboardForm):
    email = email_field()
    password = new_password_field("Password")
    next = forms.CharField(required=False, widget=forms.HiddenInput)


class LoginForm(DashboardForm):
    email = email_field()
    password = forms.CharField(
        label="Password", max_length=256, strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )
    next = forms.CharField(required=False, widget=forms.HiddenInput)


class TwoStepForm(DashboardForm):
    """The second step of a sign-in, shown only to accounts with two-step sign-in on."""

    code = forms.CharField(
        label="Code from your authenticator app", max_length=64,
        help_text="Or one of your recovery codes.",
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "one-time-code",
                                      "autofocus": True, "aria-describedby": "code-hint"}),
    )
    ticket = forms.CharField(max_length=512, widget=forms.HiddenInput)
    next = forms.CharField(required=False, widget=forms.HiddenInput)


class TwoFactorCodeForm(DashboardForm):
    code = forms.CharField(
        label="Code from your authenticator app", max_length=64,
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "one-time-code"}),
    )


class TwoFactorDisableForm(TwoFactorCodeForm):
    password = forms.CharField(
        label="Password", max_length=256, strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )


class EmailForm(DashboardForm):
    """Forgot password, and a new verification code."""

    email = email_field()


class VerifyForm(DashboardForm):
    email = email_field()
    code = code_field()
    next = forms.CharField(required=False, widget=forms.HiddenInput)


class ResetForm(DashboardForm):
    email = email_field()
    code = code_field()
    password = new_password_field("New password")


class NewPasswordForm(DashboardForm):
    """A new password, through the link mailed beside a reset code."""

    password = new_password_field("New password")


class ChangePasswordForm(DashboardForm):
    currentPassword = forms.CharField(
        label="Current password", max_length=256, strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password",
                                          "id": "current-password"}),
    )
    newPassword = new_password_field("New password", field_id="new-password")

    def __init__(self, *args, has_password: bool = True, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not has_password:  # nothing to confirm: sign-ups that disagreed left none
            del self.fields["currentPassword"]


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


class FormSettingsForm(DashboardForm):
    """A form's settings, as the API's fields. It shapes what the page sends (lines into
    lists, a checkbox into on or off); the API's serializer then checks every value, so the
    page and the API take exactly the same settings."""

    name = forms.CharField(label="Name", max_length=200)
    # Checked by the API's serializer (its pattern) and the unique index (slug_taken).
    slug = forms.CharField(
        label="Form address", required=False, max_length=64, strip=True,
        widget=forms.TextInput(attrs={"aria-describedby": "slug-hint", "spellcheck": "false",
                                      "autocapitalize": "off", "autocomplete": "off"}),
        help_text="The end of the form's address (/f/<this>): 4 to 64 letters, digits, _ and "
                  "-. Give a form moved from another service its old id here; the old address "
                  "stops answering.",
    )
    redirectUrl = forms.CharField(
        label="Redirect after an HTML form post", required=False, max_length=2000,
        widget=forms.URLInput(attrs={"aria-describedby": "redirectUrl-hint"}),
        help_text="An absolute URL. Empty: FormFlow's own thank-you page.",
    )
    allowedOrigins = forms.CharField(
        label="Allowed origins", required=False,
        widget=forms.Textarea(attrs={"rows": 3, "aria-describedby": "allowedOrigins-hint"}),
        help_text="One per line, such as https://www.example.com. Empty: any site may post.",
    )
    rateLimit = forms.IntegerField(
        label="Rate limit (submissions per minute per visitor)",
        widget=forms.NumberInput(attrs={"min": 1, "max": 10_000}),
    )
    honeypotField = forms.CharField(
        label="Honeypot field name", required=False, max_length=100,
        widget=forms.TextInput(attrs={"aria-describedby": "honeypotField-hint"}),
        help_text="A hidden field people never fill in; submissions that fill it are dropped "
                  "quietly.",
    )
    captchaProvider = forms.ChoiceField(label="CAPTCHA provider", required=False,
                                        choices=CaptchaProvider.choices)
    recaptchaSecret = forms.CharField(
        label="CAPTCHA secret key", required=False, max_length=500, strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "off",
                                          "aria-describedby": "recaptchaSecret-hint"}),
    )
    clearRecaptcha = forms.BooleanField(label="Turn CAPTCHA off", required=False)
    spamFilter = forms.BooleanField(
        label="Spam filter: hold blocked words, duplicates, link spam and what resembles your "
              "spam marks", required=False)
    blockedWords = forms.CharField(
        label="Blocked words", required=False,
        widget=forms.Textarea(attrs={"rows": 3, "aria-describedby": "blockedWords-hint"}),
        help_text="One word or phrase per line, any case; a submission containing one goes to "
                  "spam.",
    )
    retentionDays = forms.IntegerField(
        label="Keep submissions for (days)", required=False,
        widget=forms.NumberInput(attrs={"min": 1, "max": 3650,
                                        "aria-describedby": "retentionDays-hint"}),
        help_text="Older submissions are deleted every hour. Empty: keep them until you "
                  "delete them.",
    )
    fileUploads = forms.BooleanField(
        label="Keep uploaded files (stored; exports and notifications carry download links "
              "that work for an hour)",
        required=False)
    maxMegabytes = forms.DecimalField(
        label="Largest file (MB)", required=False, min_value=Decimal("0.01"),
        max_value=Decimal(MAX_FILE_BYTES // MB), decimal_places=2,
        widget=forms.NumberInput(attrs={"min": "0.01", "max": MAX_FILE_BYTES // MB,
                                        "step": "0.01", "aria-describedby": "maxMegabytes-hint"}),
        help_text=f"{MAX_FILE_BYTES // MB} MB at most. Empty: "
                  f"{DEFAULT_MAX_BYTES // MB} MB.")
    maxFiles = forms.IntegerField(
        label="Files per submission", required=False, min_value=1, max_value=MAX_FILES,
        widget=forms.NumberInput(attrs={"min": 1, "max": MAX_FILES,
                                        "aria-describedby": "maxFiles-hint"}),
        help_text=f"{MAX_FILES} at most. Empty: {DEFAULT_MAX_FILES}.")
    uploadTypes = forms.CharField(
        label="Accepted file types", required=False,
        widget=forms.Textarea(attrs={"rows": 3, "aria-describedby": "uploadTypes-hint"}),
        help_text="One per line: a type such as application/pdf, or a family such as image/*. "
                  "Checked on the file's bytes, not its name. Empty: "
                  f"{', '.join(DEFAULT_TYPES)}.")

    notifyOwner = forms.BooleanField(
        label="Email me each submission that reaches the inbox", required=False,
        widget=forms.CheckboxInput(attrs={"aria-describedby": "notifyOwner-hint"}),
        help_text="Sent to your account's address. Past 20 in an hour, the rest of that hour "
                  "comes as one email when the hour ends.",
    )

    def __init__(self, *args, form, **kwargs) -> None:
        uploads = form.file_uploads or {}
        kwargs.setdefault("initial", {
            "name": form.name, "slug": form.slug, "redirectUrl": form.redirect_url or "",
            "allowedOrigins": "\n".join(form.allowed_origins), "rateLimit": form.rate_limit,
            "honeypotField": form.honeypot_field or "", "captchaProvider": form.captcha_provider,
            "spamFilter": form.spam_filter, "blockedWords": "\n".join(form.blocked_words),
            "retentionDays": form.retention_days, "notifyOwner": form.notify_owner,
            "fileUploads": form.file_uploads is not None,
            "maxMegabytes": _megabytes(uploads.get("maxBytes", DEFAULT_MAX_BYTES)),
            "maxFiles": uploads.get("maxFiles", DEFAULT_MAX_FILES),
            "uploadTypes": "\n".join(uploads.get("types", DEFAULT_TYPES)),
        })
        super().__init__(*args, **kwargs)
        self.fields["recaptchaSecret"].help_text = (
            "CAPTCHA is on. Leave empty to keep the current secret." if form.recaptcha_enabled
            else "CAPTCHA is off. Paste a secret key to turn it on.")
        if not form.recaptcha_enabled:
            del self.fields["clearRecaptcha"]

    # The API's nested upload settings, each typed into an input of its own on the page.
    API_INPUTS = {"fileUploads.maxBytes": "maxMegabytes", "fileUploads.maxFiles": "maxFiles",
                  "fileUploads.types": "uploadTypes"}

    def add_api_errors(self, details: dict[str, str]) -> None:
        """The API's problems, each by the field it names (``allowedOrigins[0]`` is the
        Allowed origins box, ``fileUploads.maxBytes`` the Largest file input), so the page
        shows them where the owner typed."""
        for key, text in details.items():
            field = self._input_for(key)
            if field is None or text not in self.errors.get(field, []):
                self.add_error(field, text)

    def _input_for(self, key: str) -> str | None:
        path = re.sub(r"\[\d+\]|\.\d+", "", key)
        for api_name, field in self.API_INPUTS.items():
            if path == api_name or path.startswith(f"{api_name}."):
                return field
        name = path.split(".")[0]
        return name if name in self.fields else None

    def labelled_errors(self) -> list[tuple[str, str]]:
        """(label, first problem) of each field in error, as the page labels them."""
        found = []
        for name, errors in self.errors.items():
            label = self.fields[name].label if name in self.fields else ""
            found.append((str(label or ""), str(errors[0])))
        return found

    def api_values(self) -> dict:
        """The settings in the API's shape (PATCH /api/v1/forms/{id})."""
        data = self.cleaned_data
        values = {
            "name": data["name"],
            "redirectUrl": data["redirectUrl"].strip() or None,
            "allowedOrigins": _lines(data["allowedOrigins"]),
            "rateLimit": data["rateLimit"],
            "honeypotField": data["honeypotField"] or None,
            "spamFilter": "on" if data["spamFilter"] else "off",
            "blockedWords": _lines(data["blockedWords"]),
            "retentionDays": data["retentionDays"],
            "notifyOwner": data["notifyOwner"],
            "fileUploads": self._uploads(data) if data["fileUploads"] else None,
        }
        if data["slug"]:  # left empty: the address stays as it is
            values["slug"] = data["slug"]
        if data["captchaProvider"]:
            values["captchaProvider"] = data["captchaProvider"]
        if data.get("clearRecaptcha"):
            values["recaptchaSecret"] = None
        elif data["recaptchaSecret"]:
            values["recaptchaSecret"] = data["recaptchaSecret"]
        return values


    @staticmethod
    def _uploads(data: dict) -> dict:
        """Ticking the box is enough: what is left empty takes the default the page shows."""
        megabytes = data["maxMegabytes"]
        return {
            "maxBytes": (int(megabytes * MB) if megabytes is not None
                         else DEFAULT_MAX_BYTES),
            "maxFiles": data["maxFiles"] or DEFAULT_MAX_FILES,
            "types": _lines(data["uploadTypes"]) or list(DEFAULT_TYPES),
        }


def _megabytes(size: int) -> str:
    """Bytes as the MB the page shows, without trailing zeros (10, 0.5)."""
    return f"{(Decimal(size) / MB).quantize(Decimal('0.01')).normalize():f}"


class SearchForm(DashboardForm):
    """The search over a form's submissions: a GET form, its values in the page's address."""

    q = forms.CharField(
        label="Search values", required=False, min_length=search.MIN_TEXT,
        max_length=search.MAX_TEXT,
        error_messages={"min_length": f"Search for {search.MIN_TEXT} characters or more."},
        widget=forms.SearchInput(attrs={"placeholder": "an address, a name, …"}),
    )
    first_day = forms.DateField(label="First day", required=False,
                                widget=forms.DateInput(attrs={"type": "date",
                                                              "aria-describedby": "days-zone"}))
    last_day = forms.DateField(label="Last day", required=False,
                               widget=forms.DateInput(attrs={"type": "date",
                                                             "aria-describedby": "days-zone"}))

    def __init__(self, *args, zone: tzinfo = UTC, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.zone = zone  # the days are this zone's days

    def clean(self):
        values = super().clean()
        first, last = values.get("first_day"), values.get("last_day")
        if first and last and first > last:
            self.add_error("last_day", "The last day comes before the first.")
        return values

    def search(self, ids: tuple = ()) -> search.Search:
        """The Search the valid values make (within ``ids``, when given); an empty one when
        they are not valid."""
        if not self.is_valid():
            return search.Search(ids=ids)
        values = self.cleaned_data
        return search.Search.of(values["q"], values["first_day"], values["last_day"],
                                zone=self.zone, ids=ids)


class NewFormForm(forms.Form):
    name = forms.CharField(
        label="Name", max_length=200,
        widget=forms.TextInput(attrs={"id": "new-form-name", "style": "flex:1;min-width:12rem"}),
    )

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


class MarkForm(forms.Form):
    """The "Spam" and "Not spam" buttons of a submission."""

    mark = forms.ChoiceField(choices=[("spam", "Spam"), ("not-spam", "Not spam")])
    folder = forms.ChoiceField(choices=[("inbox", "Inbox"), ("spam", "Spam")], required=False)


class DeleteSubmissionForm(forms.Form):
    """A submission's Delete button; the page of the list to go back to."""

    page = forms.IntegerField(min_value=1, max_value=10**9, required=False)


class OfferedForms(forms.MultipleChoiceField):
    """Forms to choose among. An id outside the choices is not refused here but by the
    service, which answers as the API does: 400 for a form one has no role on (no word of
    whether it exists), 403 for one whose role is too low."""

    def valid_value(self, value) -> bool:
        return True


class ApiKeyForm(forms.Form):
    """A new pull API key: its name and the forms it may read, among ``offered``: one's own
    and those of the teams where one is admin (pullapi/services.py)."""

    name = forms.CharField(
        label="Name", max_length=100,
        widget=forms.TextInput(attrs={"id": "key-name", "placeholder": "Data warehouse sync"}),
    )
    # Before "forms", which hides the module below it.
    hooks = forms.BooleanField(
        label="It may also subscribe to events of these forms (REST hooks: Zapier, Make, n8n)",
        required=False,
        widget=forms.CheckboxInput(attrs={"id": "key-hooks"}),
    )
    forms = OfferedForms(
        label="Forms it may read", widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one form."},
    )

    def __init__(self, *args, offered=(), **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        choices = cast(forms.MultipleChoiceField, self.fields["forms"])
        choices.choices = [(str(form.pk), form_label(form)) for form in offered]


class ErasureForm(DashboardForm):
    """The address whose submissions are to be erased, to preview or to confirm."""

    email = forms.EmailField(
        label="Email address", max_length=320,
        widget=forms.EmailInput(attrs={"autocomplete": "off", "id": "erasure-email"}),
    )


class BulkForm(forms.Form):
    """The inbox's bulk actions over the submissions whose boxes are ticked."""

    ids = forms.MultipleChoiceField(error_messages={"required": "Choose a submission."})
    action = forms.ChoiceField(required=False, choices=[
        ("read", "Mark read"), ("unread", "Mark unread"), ("spam", "Spam"),
        ("not-spam", "Not spam"), ("delete", "Delete"), ("export", "Export CSV")])
    folder = forms.ChoiceField(choices=[("inbox", "Inbox"), ("spam", "Spam")], required=False)
    page = forms.IntegerField(min_value=1, max_value=10**9, required=False)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Any submission id: the view picks the ones of this form.
        cast(forms.MultipleChoiceField, self.fields["ids"]).valid_value = _is_uuid  # type: ignore[method-assign]

    def clean_ids(self) -> list[uuid.UUID]:
        return [uuid.UUID(value) for value in self.cleaned_data["ids"][:100]]


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


class TimeZoneForm(DashboardForm):
    """The owner's time zone (Account page); the browser fills it in on a first visit."""

    timeZone = forms.ChoiceField(
        label="Time zone",
        help_text="Times on every page, and the days a search covers, are in this zone.",
        widget=forms.Select(attrs={"aria-describedby": "timeZone-hint"}),
    )
    auto = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["timeZone"]).choices = [
            (name, name.replace("_", " ")) for name in zone_names()]


# The field rules' types, as the editor names them (forms_app/field_rules.py's TYPES).
RULE_TYPES = [
    ("text", "Text"), ("email", "Email address"), ("number", "Number"),
    ("url", "Web address"), ("tel", "Phone number"), ("date", "Date"),
    ("checkbox", "Checkbox"), ("select", "Choice from a list"), ("file", "File"),
]
RULE_INPUTS = ("name", "type", "required", "maxLength", "min", "max", "options")


class FieldRuleForm(DashboardForm):
    """One field rule, a row of the Setup page's editor. Like the settings, it only shapes
    what the page sends (lines into a list, numbers typed as text into numbers); the API's
    serializer checks the rule and its words are shown by the input they name."""

    name = forms.CharField(label="Field name", required=False, max_length=256, strip=False)
    type = forms.ChoiceField(label="Type", choices=RULE_TYPES, initial="text")
    required = forms.BooleanField(label="Required", required=False)
    maxLength = forms.IntegerField(
        label="Longest (characters)", required=False,
        widget=forms.NumberInput(attrs={"min": 1}),
        help_text="Text, email, web address and phone only.")
    min = forms.CharField(label="Lowest", required=False, max_length=100,
                          help_text="A number, or a date as YYYY-MM-DD.")
    max = forms.CharField(label="Highest", required=False, max_length=100)
    options = forms.CharField(
        label="Choices", required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="A choice from a list only: one choice per line.")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():  # each row's hint is its own
            if field.help_text:
                field.widget.attrs["aria-describedby"] = f"{self.add_prefix(name)}-hint"

    def is_blank(self) -> bool:
        data = self.cleaned_data
        return not (data.get("name") or "").strip() and not any(
            data.get(key) not in (None, "") for key in ("maxLength", "min", "max", "options"))

    def api_rule(self) -> dict:
        """The rule in the API's shape (an item of ``fields``)."""
        data = self.cleaned_data
        rule: dict = {"name": data["name"], "type": data["type"], "required": data["required"]}
        if data["maxLength"] is not None:
            rule["maxLength"] = data["maxLength"]
        for key in ("min", "max"):
            if data[key].strip():
                rule[key] = _limit(data[key].strip(), data["type"])
        if _lines(data["options"]):
            rule["options"] = _lines(data["options"])
        return rule


def _limit(text: str, kind: str) -> int | float | str:
    """A number typed for a number field; anything else as typed, for the API to judge."""
    if kind != "number":
        return text
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


class BaseFieldRuleFormSet(forms.BaseFormSet):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("auto_id", AUTO_ID)  # ids are the inputs' names, as on every page
        super().__init__(*args, **kwargs)

    def add_fields(self, form: forms.Form, index: int | None) -> None:
        super().add_fields(form, index)
        form.fields["DELETE"].label = "Remove this field"


FieldRuleFormSet = forms.formset_factory(
    FieldRuleForm, formset=BaseFieldRuleFormSet, extra=3, can_delete=True, max_num=100,
    validate_max=True, absolute_max=103)


class FieldsForm(DashboardForm):
    """What the editor saves beside the list: whether other fields are taken."""

    allowExtraFields = forms.BooleanField(
        label="Also take fields not listed here", required=False,
        help_text="Off: a submission with any other field is refused.",
        widget=forms.CheckboxInput(attrs={"aria-describedby": "allowExtraFields-hint"}))


def rules_formset(form, data=None) -> tuple[forms.BaseFormSet, FieldsForm]:
    """The editor of a form's rules: a row per rule, three blank rows for new ones."""
    initial = [{**rule, "options": "\n".join(rule.get("options", [])),
                "min": str(rule.get("min", "")), "max": str(rule.get("max", ""))}
               for rule in form.field_rules or []]
    rules = FieldRuleFormSet(data, initial=initial, prefix="rules")
    extras = FieldsForm(data, initial={"allowExtraFields": form.allow_extra_fields})
    return rules, extras


def rules_api_values(rules: forms.BaseFormSet, extras: FieldsForm) -> tuple[dict, list]:
    """``{fields, allowExtraFields}`` for the API, and which row each rule came from (so the
    API's ``fields.2.type`` is shown on the right row). No rule at all is null: any fields."""
    rows = [row for row in rules.forms
            if row.cleaned_data and not row.cleaned_data.get("DELETE") and not row.is_blank()]
    values = {"fields": [row.api_rule() for row in rows] or None,
              "allowExtraFields": extras.cleaned_data["allowExtraFields"]}
    return values, rows


def add_rule_errors(rows: list, details: dict[str, str]) -> list[str]:
    """The API's problems, each on the row and input it names; the list's own (too many
    rules) are returned, for the page to say."""
    unplaced = []
    for key, text in details.items():
        parts = key.split(".")
        if parts[0] != "fields" or len(parts) < 2 or not parts[1].isdigit():
            unplaced.append(text)
            continue
        field = parts[2] if len(parts) > 2 and parts[2] in RULE_INPUTS else None
        rows[int(parts[1])].add_error(field, text)
    return unplaced


def _audit_choices() -> list:
    return [("", "Every action"), *[
        (label, [(family, f"All: {label.lower()}"),
                 *[(action, action) for action in actions]])
        for family, actions in ACTIONS.items() for label in [FAMILY_LABELS[family]]]]


class AuditFilterForm(DashboardForm):
    """The audit log's filters, as the API's: an action or a family of them, and a first day."""

    action = forms.ChoiceField(label="Action", required=False, choices=_audit_choices)
    since = forms.DateField(label="Since", required=False,
                            widget=forms.DateInput(attrs={"type": "date"}))
    cursor = forms.CharField(required=False, max_length=4000, widget=forms.HiddenInput)


ROLE_CHOICES = [("viewer", "Viewer"), ("editor", "Editor"), ("admin", "Admin"),
                ("owner", "Owner")]


class TeamForm(DashboardForm):
    name = forms.CharField(label="Team name", max_length=200)


class InviteForm(DashboardForm):
    """An invitation: the services check the address and whether the caller may give the
    role."""

    email = email_field()
    role = forms.ChoiceField(label="Role", choices=ROLE_CHOICES, initial="viewer")


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=ROLE_CHOICES)
