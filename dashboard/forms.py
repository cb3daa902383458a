"""The dashboard's account forms, as Django forms: each field's input, label, id and browser
hints in one place, and the same names the templates and the API use.

They check only what the browser is told (present, not too long); the account services
check the rest (a valid address, a strong password, the code) and say why in the API's
words, which the pages show."""

from __future__ import annotations

from django import forms

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


class AccountForm(forms.Form):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("auto_id", AUTO_ID)
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


class SignupForm(AccountForm):
    email = email_field()
    password = new_password_field("Password")


class LoginForm(AccountForm):
    email = email_field()
    password = forms.CharField(
        label="Password", max_length=256, strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )
    next = forms.CharField(required=False, widget=forms.HiddenInput)


class EmailForm(AccountForm):
    """Forgot password, and a new verification code."""

    email = email_field()


class VerifyForm(AccountForm):
    email = email_field()
    code = code_field()


class ResetForm(AccountForm):
    email = email_field()
    code = code_field()
    password = new_password_field("New password")


class ChangePasswordForm(AccountForm):
    currentPassword = forms.CharField(
        label="Current password", max_length=256, strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password",
                                          "id": "current-password"}),
    )
    newPassword = new_password_field("New password", field_id="new-password")
