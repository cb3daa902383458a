from django.urls import path

from dashboard import views

urlpatterns = [
    path("", views.home, name="dashboard"),
    path("signup", views.signup, name="dashboard-signup"),
    path("verify", views.verify, name="dashboard-verify"),
    path("verify/resend", views.resend, name="dashboard-resend"),
    path("login", views.login, name="dashboard-login"),
    path("logout", views.logout, name="dashboard-logout"),
    path("forgot-password", views.forgot_password, name="dashboard-forgot-password"),
    path("reset-password", views.reset_password, name="dashboard-reset-password"),
    path("account", views.account, name="dashboard-account"),
    path("account/password", views.change_password, name="dashboard-change-password"),
    path("account/logout-all", views.logout_everywhere, name="dashboard-logout-all"),
    path("forms", views.form_create, name="dashboard-form-create"),
    path("forms/<str:form_id>", views.form_detail, name="dashboard-form"),
    path("forms/<str:form_id>/settings", views.form_settings, name="dashboard-form-settings"),
    path("forms/<str:form_id>/delete", views.form_delete, name="dashboard-form-delete"),
    path(
        "forms/<str:form_id>/submissions/<uuid:submission_id>/delete",
        views.submission_remove,
        name="dashboard-submission-delete",
    ),
    path(
        "forms/<str:form_id>/submissions/<uuid:submission_id>/mark",
        views.submission_mark,
        name="dashboard-submission-mark",
    ),
    path("integrations", views.integrations_page, name="dashboard-integrations"),
    path("integrations/new", views.integration_create, name="dashboard-integration-create"),
    path("integrations/google", views.google_connect, name="dashboard-google"),
    path("integrations/<uuid:integration_id>/toggle", views.integration_toggle),
    path("integrations/<uuid:integration_id>/test", views.integration_test),
    path("integrations/<uuid:integration_id>/retry", views.integration_retry),
    path("integrations/<uuid:integration_id>/delete", views.integration_remove),
    path("settings/api-keys", views.api_keys, name="dashboard-api-keys"),
    path("settings/api-keys/new", views.api_key_create),
    path("settings/api-keys/<uuid:key_id>/revoke", views.api_key_revoke),
]
