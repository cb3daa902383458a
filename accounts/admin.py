from collections.abc import Callable
from functools import partial

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpResponse, HttpResponseRedirect

from accounts import hooks, registration, two_factor
from accounts.device import Client
from accounts.models import EmailCode, Invitation, MailerStatus, User
from accounts.services import usage_reset, user_authenticate
from audit.admin_changes import AuditedAdmin, operator
from audit.services import Target
from core.admin import ChangedFieldsOnlyAdmin
from core.errors import ServiceError


class UserCreateForm(AdminUserCreationForm):
    class Meta:
        model = User
        fields = ("email",)


class UserEditForm(UserChangeForm):
    class Meta:
        model = User
        fields = "__all__"


@admin.register(User)
class UserAdmin(AuditedAdmin, ChangedFieldsOnlyAdmin, BaseUserAdmin):
    audit_kind = "account"
    add_form = UserCreateForm
    form = UserEditForm
    ordering = ["email"]
    list_display = [
        "email",
        "name",
        "is_verified",
        "is_active",
        "usage_this_month",
        "monthly_submission_limit",
        "date_joined",
    ]
    list_filter = ["is_verified", "is_active", "is_staff"]
    search_fields = ["email", "name"]
    readonly_fields = ["date_joined", "last_login", "usage_this_month"]
    actions = ["reset_usage"]
    fieldsets = [
        (None, {"fields": ["email", "password", "name"]}),
        ("Status", {"fields": ["is_verified", "onboarding_complete", "is_active"]}),
        ("Usage", {"fields": ["monthly_submission_limit", "usage_this_month"]}),
        ("Permissions", {"fields": ["is_staff", "is_superuser", "groups", "user_permissions"]}),
        ("Dates", {"fields": ["date_joined", "last_login"]}),
    ]
    add_fieldsets = [
        (
            None,
            {"classes": ["wide"], "fields": ["email", "usable_password", "password1", "password2"]},
        )
    ]

    def save_model(self, request, obj: User, form, change) -> None:
        super().save_model(request, obj, form, change)
        # A deactivated user's tokens stay dead if the account is ever activated again.
        if change and "is_active" in form.changed_data and not obj.is_active:
            obj.revoke_tokens()

    def audit_owner(self, obj: User) -> User:
        return obj

    def get_deleted_objects(self, objs, request):
        """What deleting takes once each account has left its teams (tried here and rolled
        back; delete_model does it): their forms stay the team's. The last owner of a team is
        refused by name, as a protected object is, and nothing is deleted."""
        with transaction.atomic():
            try:
                for user in objs:
                    hooks.account_leaving(user, operator(request))
                return super().get_deleted_objects(objs, request)
            except ServiceError as error:
                return [], {}, set(), [error.message]
            finally:
                transaction.set_rollback(True)

    def delete_model(self, request, obj: User) -> None:
        hooks.account_leaving(obj, operator(request))
        super().delete_model(request, obj)

    def delete_view(self, request, object_id, extra_context=None):
        return self._unless_refused(request, partial(super().delete_view, request, object_id,
                                                     extra_context))

    def response_action(self, request, queryset):
        return self._unless_refused(request, partial(super().response_action, request,
                                                     queryset))

    def _unless_refused(self, request, deleting: Callable[[], HttpResponse]) -> HttpResponse:
        """Deleting in one transaction. Another owner may leave between the page's check
        (get_deleted_objects) and the deletion, which then finds the account a team's last
        owner and refuses: nothing is deleted, and the admin says why, as for any refusal,
        where the refusal would otherwise be a server error."""
        try:
            with transaction.atomic():
                return deleting()
        except ServiceError as error:
            self.message_user(request, error.message, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def audit_target(self, obj: User) -> Target:
        return Target("account", obj.pk, obj.email)

    def user_change_password(self, request, id, form_url=""):
        """The operator's password form, recorded in the account's log as its holder's own
        change is, in the same transaction."""
        with transaction.atomic():
            response = super().user_change_password(request, id, form_url)
            if request.method == "POST" and response.status_code == 302:
                user = self.get_object(request, id)
                self._record(request, user, self.audit_target(user), "password_changed",
                             {"how": "set"})
        return response

    @admin.display(description="Used this month")
    def usage_this_month(self, user: User) -> str:
        return f"{user.monthly_submission_count} / {user.effective_monthly_limit}"

    @admin.action(description="Reset this month's submission usage")
    def reset_usage(self, request, queryset: QuerySet[User]) -> None:
        for user in queryset:
            usage_reset(user=user)
        self.message_user(request, f"Reset usage of {queryset.count()} users.", messages.SUCCESS)


@admin.register(EmailCode)
class EmailCodeAdmin(admin.ModelAdmin):
    """Codes are stored hashed; operators see only when one was sent and how it was tried."""

    list_display = ["user", "purpose", "sent_at", "expires_at", "wrong_tries"]
    list_select_related = ["user"]
    search_fields = ["user__email"]
    exclude = ["code_hash", "link_hash", "link_code_hash"]
    readonly_fields = ["user", "purpose", "sent_at", "expires_at", "wrong_tries"]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(MailerStatus)
class MailerStatusAdmin(admin.ModelAdmin):
    """Whether account email (verification codes) is being sent; written by the sender only."""

    list_display = ["__str__", "failing_since", "last_error", "updated_at"]
    readonly_fields = ["failing_since", "last_error", "updated_at"]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    """Adding one invites its address for 7 days (REGISTRATION=invite)."""

    list_display = ["email", "invited_at", "expires_at"]
    search_fields = ["email"]
    ordering = ["-invited_at"]
    fields = ["email"]
    actions = ["renew"]

    def save_model(self, request, obj, form, change) -> None:
        renewed = registration.invitation_create(email=obj.email)
        obj.pk, obj.invited_at, obj.expires_at = renewed.pk, renewed.invited_at, renewed.expires_at

    @admin.action(description="Invite again for 7 days from now")
    def renew(self, request, queryset: QuerySet[Invitation]) -> None:
        for invitation in queryset:
            registration.invitation_create(email=invitation.email)
        messages.success(request, f"Renewed {queryset.count()} invitations for 7 days.")


class StaffSignInForm(AdminAuthenticationForm):
    """The admin's sign-in, checked by the same service as every other sign-in surface (its
    limits, device cookies and two-step codes). Operators must have two-step sign-in on; one
    who has not is sent to set it up (accounts/public_pages.py reads the mark left here)."""

    otp = forms.CharField(label="Two-step code", required=False, max_length=64,
                          widget=forms.TextInput(attrs={"autocomplete": "one-time-code"}))

    def clean(self) -> dict:
        email, password = self.cleaned_data.get("username"), self.cleaned_data.get("password")
        request = self.request
        if not email or not password or request is None:
            return self.cleaned_data
        try:
            user = user_authenticate(email=email, password=password,
                                     client=Client.of(request),
                                     otp=self.cleaned_data.get("otp") or None)
        except ServiceError as error:
            request.signin_refusal = error  # type: ignore[attr-defined]
            raise ValidationError(error.message, code=error.code) from None
        self.confirm_login_allowed(user)
        if not two_factor.is_enabled(user):
            request.needs_two_factor = user  # type: ignore[attr-defined]
            raise ValidationError("Operators must turn on two-step sign-in first.",
                                  code="two_factor_setup")
        self.user_cache = user
        return self.cleaned_data


admin.site.login_form = StaffSignInForm
admin.site.login_template = "admin/staff_login.html"
