from django.urls import path
from django.views.generic import RedirectView

from dashboard.views import (
    account,
    api_keys,
    audit,
    confirm,
    erasure,
    form_sections,
    home,
    integrations,
    invitations,
    signin,
    submissions,
    teams,
    two_factor,
)

# Every page is named: templates use {% url "dashboard:..." %} and views reverse(), so no
# path is written twice.
app_name = "dashboard"

urlpatterns = [
    path("", home.home, name="home"),
    path("signup", signin.signup, name="signup"),
    path("verify", signin.verify, name="verify"),
    path("verify/resend", signin.resend, name="resend"),
    path("login", signin.login, name="login"),
    path("login/two-step", signin.two_step, name="login-two-step"),
    path("logout", signin.logout, name="logout"),
    path("forgot-password", signin.forgot_password, name="forgot-password"),
    path("reset-password", signin.reset_password, name="reset-password"),
    path("confirm/<str:token>", confirm.confirm, name="confirm"),
    path("invitations/<str:token>", invitations.invitation, name="invitation"),
    path("account", account.account, name="account"),
    path("account/password", account.change_password, name="change-password"),
    path("account/two-factor", two_factor.two_factor_page, name="two-factor"),
    path("account/two-factor/setup", two_factor.two_factor_setup, name="two-factor-setup"),
    path("account/two-factor/new", two_factor.two_factor_new, name="two-factor-new"),
    path("account/two-factor/codes", two_factor.two_factor_codes, name="two-factor-codes"),
    path("account/two-factor/enable", two_factor.two_factor_enable, name="two-factor-enable"),
    path("account/two-factor/disable", two_factor.two_factor_disable, name="two-factor-disable"),
    path("account/logout-all", account.logout_everywhere, name="logout-all"),
    path("account/erasure", erasure.erasure_page, name="erasure"),
    path("account/erasure/confirm", erasure.erasure_confirm, name="erasure-confirm"),
    path("account/time-zone", account.account_time_zone, name="time-zone"),
    path("account/audit", audit.audit_page, name="audit"),
    path("forms", home.form_create, name="form-create"),
    # A form's sections, each its own page (dashboard/views/form_sections.py).
    path("forms/<str:form_id>", form_sections.form_inbox, name="form"),
    path("forms/<str:form_id>/spam", form_sections.form_inbox, {"folder": "spam"},
         name="form-spam"),
    path("forms/<str:form_id>/setup", form_sections.form_setup, name="form-setup"),
    path("forms/<str:form_id>/integrations", form_sections.form_integrations,
         name="form-integrations"),
    path("forms/<str:form_id>/settings", form_sections.form_settings, name="form-settings"),
    path("forms/<str:form_id>/export", form_sections.form_export, name="form-export"),
    path("forms/<str:form_id>/delete", form_sections.form_delete, name="form-delete"),
    path("forms/<str:form_id>/move", form_sections.form_move, name="form-move"),
    path("forms/<str:form_id>/submissions/bulk", form_sections.submissions_bulk,
         name="submissions-bulk"),
    path(
        "forms/<str:form_id>/submissions/<uuid:submission_id>",
        submissions.submission_detail,
        name="submission",
    ),
    path(
        "forms/<str:form_id>/submissions/<uuid:submission_id>/deliveries/<uuid:delivery_id>"
        "/retry",
        submissions.delivery_retry,
        name="delivery-retry",
    ),
    path(
        "forms/<str:form_id>/submissions/<uuid:submission_id>/delete",
        submissions.submission_remove,
        name="submission-delete",
    ),
    path(
        "forms/<str:form_id>/submissions/<uuid:submission_id>/mark",
        submissions.submission_mark,
        name="submission-mark",
    ),
    path("teams", teams.teams_page, name="teams"),
    path("teams/new", teams.team_create, name="team-create"),
    path("teams/<uuid:team_id>", teams.team_page, name="team"),
    path("teams/<uuid:team_id>/rename", teams.team_rename, name="team-rename"),
    path("teams/<uuid:team_id>/account", teams.team_account, name="team-account"),
    path("teams/<uuid:team_id>/delete", teams.team_delete, name="team-delete"),
    path("teams/<uuid:team_id>/members/<uuid:user_id>/role", teams.member_role,
         name="team-member-role"),
    path("teams/<uuid:team_id>/members/<uuid:user_id>/remove", teams.member_remove,
         name="team-member-remove"),
    path("teams/<uuid:team_id>/invitations", teams.invitation_create,
         name="team-invitation-create"),
    path("teams/<uuid:team_id>/invitations/<uuid:invitation_id>/withdraw",
         teams.invitation_withdraw, name="team-invitation-withdraw"),
    path("integrations", integrations.integrations_page, name="integrations"),
    path("integrations/new", integrations.integration_create, name="integration-create"),
    path("integrations/google", integrations.google_connect, name="google"),
    path("integrations/<uuid:integration_id>/toggle", integrations.integration_toggle,
         name="integration-toggle"),
    path("integrations/<uuid:integration_id>/test", integrations.integration_test,
         name="integration-test"),
    path("integrations/<uuid:integration_id>/retry", integrations.integration_retry,
         name="integration-retry"),
    path("integrations/<uuid:integration_id>/delete", integrations.integration_remove,
         name="integration-delete"),
    path("settings/api-keys", api_keys.api_keys, name="api-keys"),
    path("settings/api-keys/new", api_keys.api_key_create, name="api-key-create"),
    path("settings/api-keys/<uuid:key_id>/revoke", api_keys.api_key_revoke, name="api-key-revoke"),
]

# The addresses people type or guess, sent to the page they mean (a 302, so a page may take
# one of these names later).
GUESSED = {
    "api-keys": "api-keys", "keys": "api-keys", "settings": "account", "profile": "account",
    "sign-in": "login", "signin": "login", "log-in": "login", "register": "signup",
    "sign-up": "signup", "forgot": "forgot-password", "password-reset": "forgot-password",
    "two-step": "two-factor", "2fa": "two-factor", "security": "two-factor",
    "audit": "audit", "audit-log": "audit", "activity": "audit",
}
urlpatterns += [
    path(guessed, RedirectView.as_view(pattern_name=f"dashboard:{page}", query_string=True))
    for guessed, page in GUESSED.items()
]
