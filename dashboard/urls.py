from django.urls import path

from dashboard import form_views, views

# Every page is named: templates use {% url "dashboard:..." %} and views reverse(), so no
# path is written twice.
app_name = "dashboard"

urlpatterns = [
    path("", views.home, name="home"),
    path("signup", views.signup, name="signup"),
    path("verify", views.verify, name="verify"),
    path("verify/resend", views.resend, name="resend"),
    path("login", views.login, name="login"),
    path("logout", views.logout, name="logout"),
    path("forgot-password", views.forgot_password, name="forgot-password"),
    path("reset-password", views.reset_password, name="reset-password"),
    path("account", views.account, name="account"),
    path("account/password", views.change_password, name="change-password"),
    path("account/two-factor", views.two_factor_page, name="two-factor"),
    path("account/two-factor/setup", views.two_factor_setup, name="two-factor-setup"),
    path("account/two-factor/new", views.two_factor_new, name="two-factor-new"),
    path("account/two-factor/codes", views.two_factor_codes, name="two-factor-codes"),
    path("account/two-factor/enable", views.two_factor_enable, name="two-factor-enable"),
    path("account/two-factor/disable", views.two_factor_disable, name="two-factor-disable"),
    path("account/logout-all", views.logout_everywhere, name="logout-all"),
    path("account/erasure", views.erasure_page, name="erasure"),
    path("account/erasure/confirm", views.erasure_confirm, name="erasure-confirm"),
    path("account/time-zone", views.account_time_zone, name="time-zone"),
    path("forms", views.form_create, name="form-create"),
    # A form's sections, each its own page (dashboard/form_views.py).
    path("forms/<str:form_id>", form_views.form_inbox, name="form"),
    path("forms/<str:form_id>/spam", form_views.form_inbox, {"folder": "spam"},
         name="form-spam"),
    path("forms/<str:form_id>/setup", form_views.form_setup, name="form-setup"),
    path("forms/<str:form_id>/integrations", form_views.form_integrations,
         name="form-integrations"),
    path("forms/<str:form_id>/settings", form_views.form_settings, name="form-settings"),
    path("forms/<str:form_id>/export", form_views.form_export, name="form-export"),
    path("forms/<str:form_id>/delete", form_views.form_delete, name="form-delete"),
    path("forms/<str:form_id>/submissions/bulk", form_views.submissions_bulk,
         name="submissions-bulk"),
    path(
        "forms/<str:form_id>/submissions/<uuid:submission_id>",
        views.submission_detail,
        name="submission",
    ),
    path(
        "forms/<str:form_id>/submissions/<uuid:submission_id>/deliveries/<uuid:delivery_id>"
        "/retry",
        views.delivery_retry,
        name="delivery-retry",
    ),
    path(
        "forms/<str:form_id>/submissions/<uuid:submission_id>/delete",
        views.submission_remove,
        name="submission-delete",
    ),
    path(
        "forms/<str:form_id>/submissions/<uuid:submission_id>/mark",
        views.submission_mark,
        name="submission-mark",
    ),
    path("integrations", views.integrations_page, name="integrations"),
    path("integrations/new", views.integration_create, name="integration-create"),
    path("integrations/google", views.google_connect, name="google"),
    path("integrations/<uuid:integration_id>/toggle", views.integration_toggle,
         name="integration-toggle"),
    path("integrations/<uuid:integration_id>/test", views.integration_test,
         name="integration-test"),
    path("integrations/<uuid:integration_id>/retry", views.integration_retry,
         name="integration-retry"),
    path("integrations/<uuid:integration_id>/delete", views.integration_remove,
         name="integration-delete"),
    path("settings/api-keys", views.api_keys, name="api-keys"),
    path("settings/api-keys/new", views.api_key_create, name="api-key-create"),
    path("settings/api-keys/<uuid:key_id>/revoke", views.api_key_revoke, name="api-key-revoke"),
]
